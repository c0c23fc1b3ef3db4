use graph_runtime::cuda_graph;

cuda_graph! {
    #[device_lunch]
    graph GraphAttr() {
        k: kernel kernels::K<<<1, 32>>>();
    }
}

fn main() {}
