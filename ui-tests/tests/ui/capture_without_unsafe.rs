use graph_runtime::cuda_graph;

cuda_graph! {
    graph Captured() {
        lib: capture |s| { Ok(()) };
    }
}

fn main() {}
