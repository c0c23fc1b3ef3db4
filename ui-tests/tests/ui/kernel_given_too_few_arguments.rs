// Too few kernel arguments: one error at the argument list, naming the
// kernel and its parameters.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Short(x: &mut CudaSlice<f32>) {
        k: kernel kernels::AddOne<<<1, 32>>>(x);
    }
}

fn main() {}
