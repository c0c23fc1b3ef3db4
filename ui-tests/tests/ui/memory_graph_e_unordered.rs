use graph_runtime::cuda_graph;

cuda_graph! {
    graph GuideMemory(n: u32) {
        buf: alloc f32[n];
        a: kernel kernels::Iota<<<1, 32>>>(buf, n);
        b: kernel kernels::AddOne<<<1, 32>>>(buf, n);
        c: kernel kernels::AddOne<<<1, 32>>>(buf, n);
        done: free buf;
        e: kernel kernels::AddOne<<<1, 32>>>(buf, n);
        buf -> a -> [b, c] -> done;
        e -> done;
    }
}

fn main() {}
