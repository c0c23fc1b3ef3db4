use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Pdl(x: &mut CudaSlice<f32>) {
        first: kernel kernels::PdlAddOne<<<1, 32>>>(x, 32u32);
        second: kernel kernels::AddOne<<<1, 32>>>(x, 32u32);
        first -(programmatic)-> second;
    }
}

fn main() {}
