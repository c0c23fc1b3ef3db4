// Two kernels set one conditional handle with no edge between them: CUDA
// leaves concurrent sets of one handle undefined.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Racy() {
        cond go;
        yes: kernel kernels::SetCondition<<<1, 1>>>(go, 1u32);
        no: kernel kernels::SetCondition<<<1, 1>>>(go, 0u32);
        branch: if go { work: empty; }
        [yes, no] -> branch;
    }
}

fn main() {}
