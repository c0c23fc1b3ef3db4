// An edge from the then-body to the else-body joins two bodies of one
// conditional node: named as such, not as "outside the body".
use graph_runtime::cuda_graph;
cuda_graph! {
    graph TE() {
        cond c;
        set: kernel kernels::SetCondition<<<1, 1>>>(c, 1u32);
        branch: if c { x: empty; } else { y: empty; x -> y; }
        set -> branch;
    }
}
fn main() {}
