use graph_runtime::cuda_graph;

cuda_graph! {
    graph PriorityOff() {
        #[priority(1)]
        k: kernel kernels::K<<<1, 32>>>();
    }
}

fn main() {}
