use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

// `#[disjoint]` on an alloc scope would read as a claim for the nodes in
// it and check nothing: refused, naming where it applies.
cuda_graph! {
    graph ScopeDisjoint(x: &mut CudaSlice<f32>, n: u32) {
        #[disjoint(x, scratch)]
        alloc scratch: f32[256] {
            a: kernel kernels::AddOne<<<1, 32>>>(x, n);
            b: kernel kernels::AddOne<<<1, 32>>>(x, n);
        }
    }
}

fn main() {}
