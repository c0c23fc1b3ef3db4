use graph_runtime::cuda_graph;

cuda_graph! {
    graph Twice() {
        load: empty;
        load: empty;
    }
}

fn main() {}
