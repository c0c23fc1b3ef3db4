use graph_runtime::cuda_graph;

cuda_graph! {
    graph ScopeEscape() {
        #[escape]
        alloc scratch: f32[256] {
            k: kernel kernels::K<<<1, 32>>>(scratch);
        }
    }
}

fn main() {}
