// Setters of one handle that are ordered, or that sit in different arms of
// one conditional node, are accepted.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Ordered() {
        cond go;
        cond pick = 0;
        first: kernel kernels::SetCondition<<<1, 1>>>(go, 1u32);
        second: kernel kernels::SetCondition<<<1, 1>>>(go, 0u32);
        branch: if go { work: empty; }
        choose: if pick {
            a: kernel kernels::SetCondition<<<1, 1>>>(go, 1u32);
        } else {
            b: kernel kernels::SetCondition<<<1, 1>>>(go, 0u32);
        }
        first -> second -> choose -> branch;
    }
}

fn main() {}
