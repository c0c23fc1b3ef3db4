use graph_runtime::cuda_graph;

cuda_graph! {
    graph Own() {
        a: empty;
        a -> a;
    }
}

fn main() {}
