use graph_runtime::cuda_graph;

cuda_graph! {
    #[device_launch]
    graph OnDeviceIf() {
        cond go = 1;
        branch: if go { k: kernel kernels::K<<<1, 32>>>(); }
    }
}

fn main() {}
