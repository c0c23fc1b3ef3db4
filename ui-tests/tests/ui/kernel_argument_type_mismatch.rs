use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Wrong(x: &mut CudaSlice<f32>, n: u32) {
        // `Scale` takes (Out<f32>, f32, u32): the factor is given as a u32.
        k: kernel kernels::Scale<<<1, 32>>>(x, n, n);
    }
}

fn main() {}
