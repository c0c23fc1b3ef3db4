use graph_runtime::cuda_graph;

cuda_graph! {
    graph Unknown() {
        done: free nothing;
    }
}

fn main() {}
