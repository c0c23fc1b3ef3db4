// A kernel argument that clears the failure a previous kernel node
// recorded, so that the build would succeed without that node.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Forget(x: &mut CudaSlice<f32>, n: u32) {
        first: kernel kernels::Scale<<<1, 32>>>(x, 2.0f32, n);
        second: kernel kernels::Scale<<<1, 32>>>(x, 2.0f32, { __failed = None; n });
        first -> second;
    }
}

fn main() {}
