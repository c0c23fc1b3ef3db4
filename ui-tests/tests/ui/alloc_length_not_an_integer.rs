// An allocation's length must be an integer: a float is refused at its
// tokens (`as usize` would have truncated it silently).
use graph_runtime::cuda_graph;

cuda_graph! {
    graph FloatLength(n: f32) {
        tmp: alloc f32[n * 2.0];
        done: free tmp;
        tmp -> done;
    }
}

fn main() {}
