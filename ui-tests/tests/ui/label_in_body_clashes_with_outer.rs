// A body node labelled like a node outside: one error, at the second.
use graph_runtime::cuda_graph;
cuda_graph! {
    graph Dup() {
        cond c;
        set: kernel kernels::SetCondition<<<1, 1>>>(c, 1u32);
        a: empty;
        branch: if c { a: empty; }
        set -> branch;
    }
}
fn main() {}
