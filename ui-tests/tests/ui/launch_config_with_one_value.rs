use graph_runtime::cuda_graph;

cuda_graph! {
    graph OneValue() {
        k: kernel kernels::K<<<1>>>();
    }
}

fn main() {}
