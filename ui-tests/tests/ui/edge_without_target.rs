use graph_runtime::cuda_graph;

cuda_graph! {
    graph Dangling() {
        a: empty;
        a;
    }
}

fn main() {}
