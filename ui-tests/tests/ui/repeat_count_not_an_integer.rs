// The count is an integer evaluated when the graph is built.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Fractional(n: f32) {
        steps: for i in 0..n {
            a: empty;
        }
    }
}

fn main() {}
