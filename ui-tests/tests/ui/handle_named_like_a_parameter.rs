// A handle named like a parameter would shadow it: a name clash at the
// handle, not a type error later.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Shadow(go: u32) {
        cond go;
        set: kernel kernels::SetCondition<<<1, 1>>>(go, 1u32);
        branch: if go { e: empty; }
        set -> branch;
    }
}

fn main() {}
