use graph_runtime::cuda_graph;

cuda_graph! {
    graph NotABuffer(n: u32) {
        k: kernel kernels::AddOne<<<1, 32>>>(n, n);
    }
}

fn main() {}
