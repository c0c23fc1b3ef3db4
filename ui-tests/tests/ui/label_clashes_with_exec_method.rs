use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Clash(x: &mut CudaSlice<f32>, n: u32) {
        launch: kernel kernels::AddOne<<<1, 32>>>(x, n);
        launch_on_own_stream: kernel kernels::AddOne<<<1, 32>>>(x, n);
        launch -> launch_on_own_stream;
    }
}

fn main() {}
