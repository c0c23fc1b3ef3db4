// A block stands for its iterations as one node: a path back into it is a
// cycle, named through the block's start and end.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Around(n: usize) {
        a: empty;
        steps: for i in 0..n {
            b: empty;
        }
        a -> steps -> a;
    }
}

fn main() {}
