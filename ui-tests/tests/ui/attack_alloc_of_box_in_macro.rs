// The same attack through the DSL: an allocation whose element type is
// not plain data.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Boxes(n: usize) {
        boxes: alloc Box<u64>[n];
        done: free boxes;
        boxes -> done;
    }
}

fn main() {}
