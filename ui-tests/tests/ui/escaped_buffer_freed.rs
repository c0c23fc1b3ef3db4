use graph_runtime::cuda_graph;

cuda_graph! {
    graph EscapeFree() {
        #[escape]
        out: alloc f32[256];
        done: free out;
        out -> done;
    }
}

fn main() {}
