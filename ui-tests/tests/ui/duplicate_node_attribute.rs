use graph_runtime::cuda_graph;

cuda_graph! {
    graph TwiceDisabled() {
        #[disabled]
        #[disabled]
        k: kernel kernels::K<<<1, 32>>>();
    }
}

fn main() {}
