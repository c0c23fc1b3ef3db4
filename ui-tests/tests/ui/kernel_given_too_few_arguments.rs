// Too few kernel arguments: reported at the argument list, naming no
// generated item.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Short(x: &mut CudaSlice<f32>) {
        k: kernel kernels::AddOne<<<1, 32>>>(x);
    }
}

fn main() {}
