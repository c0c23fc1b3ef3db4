use graph_runtime::cuda_graph;

cuda_graph! {
    graph Disabled() {
        #[disabled]
        nothing: empty;
    }
}

fn main() {}
