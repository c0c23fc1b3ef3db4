use graph_runtime::cuda_graph;

cuda_graph! {
    graph Late(n: usize) {
        buf: alloc f32[n];
        k1: kernel kernels::K<<<1, 32>>>(buf);
        k2: kernel kernels::K<<<1, 32>>>(buf);
        done: free buf;
        buf -> [k1, k2];
        k1 -> done;
    }
}

fn main() {}
