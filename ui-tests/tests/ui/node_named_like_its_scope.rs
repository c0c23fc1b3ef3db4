// A node in a scope labelled like the scope: one error (no bogus cycle
// through the scope's free node).
use graph_runtime::cuda_graph;
cuda_graph! {
    graph S(n: u32) {
        alloc buf: f32[n] {
            buf: kernel kernels::Iota<<<1, 32>>>(buf, n);
        }
    }
}
fn main() {}
