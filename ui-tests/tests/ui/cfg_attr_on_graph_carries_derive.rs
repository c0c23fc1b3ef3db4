use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    #[cfg_attr(all(), derive(Clone))]
    graph Cloned(x: &mut CudaSlice<f32>, n: u32) {
        bump: kernel kernels::AddOne<<<1, 32>>>(x, n);
    }
}

fn main() {}
