// A one-letter slip in a short label gets the similar label as a hint.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Typo() {
        abc: empty;
        xyz: empty;
        abd -> xyz;
    }
}

fn main() {}
