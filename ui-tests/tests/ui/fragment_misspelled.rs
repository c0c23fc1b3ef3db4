// A misspelled fragment name offers the declared one it resembles, and
// that fragment is not also reported as never placed.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Twice() {
        fragment twice { a: empty; b: empty; a -> b; }
        first: use twcie;
    }
}

fn main() {}
