// `a[i+1]` names a later iteration: write the edge from the earlier one.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Later(n: usize) {
        steps: for i in 0..n {
            a: empty;
            a -> a[i+1];
        }
    }
}

fn main() {}
