use graph_runtime::cuda_graph;

cuda_graph! {
    graph Early(n: usize) {
        buf: alloc f32[n];
        k1: kernel kernels::K<<<1, 32>>>(buf);
        done: free buf;
        k1 -> done;
        buf -> done;
    }
}

fn main() {}
