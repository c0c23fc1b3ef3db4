// A programmatic edge written beside the plain edge it was meant to
// change: the duplicate's error says that an edge has one kind, and how
// to give it this one.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Chain(x: &mut CudaSlice<f32>) {
        a: kernel kernels::PdlAddOne<<<1, 32>>>(x, 32u32);
        b: kernel kernels::PdlAddOne<<<1, 32>>>(x, 32u32);
        a -> b;
        #[programmatic]
        a -> b;
    }
}

fn main() {}
