use graph_runtime::cuda_graph;

cuda_graph! {
    graph NoLaunch() {
        k: kernel kernels::K(1, 2);
    }
}

fn main() {}
