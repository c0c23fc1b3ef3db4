// The edge between a free and its alloc written the wrong way round: the
// hint says to reverse it rather than to add an edge that would close a
// cycle.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Backwards(n: u32) {
        tmp: alloc f32[n];
        done: free tmp;
        done -> tmp;
    }
}

fn main() {}
