use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Chain(x: &mut CudaSlice<f32>) {
        a: kernel kernels::PdlAddOne<<<1, 32>>>(x, 32u32);
        b: kernel kernels::PdlAddOne<<<1, 32>>>(x, 32u32);
        join: empty;
        #[programmatic]
        a -> b -> join;
    }
}

fn main() {}
