use graph_runtime::cuda_graph;

cuda_graph! {
    graph EscapeKernel() {
        #[escape]
        k: kernel kernels::K<<<1, 32>>>();
    }
}

fn main() {}
