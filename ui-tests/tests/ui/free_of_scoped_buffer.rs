use graph_runtime::cuda_graph;

cuda_graph! {
    graph ScopeFree() {
        alloc scratch: f32[256] {
            k: kernel kernels::K<<<1, 32>>>(scratch);
            done: free scratch;
            k -> done;
        }
    }
}

fn main() {}
