// A dynamic shared-memory size of the wrong type: rustc's error points at
// the size, not at the whole invocation.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph G(x: &mut CudaSlice<f32>, bytes: usize) {
        a: kernel kernels::AddOne<<<1, 32, bytes>>>(x, 32u32);
    }
}

fn main() {}
