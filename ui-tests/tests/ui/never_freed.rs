use graph_runtime::cuda_graph;

cuda_graph! {
    graph Leaky(n: usize) {
        buf: alloc u8[n];
        k: kernel kernels::K<<<1, 32>>>(buf);
        buf -> k;
    }
}

fn main() {}
