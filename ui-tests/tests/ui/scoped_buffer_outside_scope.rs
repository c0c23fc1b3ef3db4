use graph_runtime::cuda_graph;

cuda_graph! {
    graph Outside() {
        alloc scratch: f32[256] {
            fill_it: fill scratch = 0.0f32;
        }
        read: kernel kernels::K<<<1, 32>>>(scratch);
        scratch -> read;
    }
}

fn main() {}
