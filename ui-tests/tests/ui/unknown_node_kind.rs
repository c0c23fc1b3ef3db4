use graph_runtime::cuda_graph;

cuda_graph! {
    graph Kind() {
        k: launch kernels::K;
    }
}

fn main() {}
