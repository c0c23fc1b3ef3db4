use graph_runtime::cuda_graph;

cuda_graph! {
    graph Chain(x: &mut graph_runtime::cudarc::driver::CudaSlice<f32>) {
        a: kernel kernels::PdlAddOne<<<1, 32>>>(x, 32u32);
        b: kernel kernels::PdlAddOne<<<1, 32>>>(x, 32u32);
        #[programmatic]
        #[launch_order]
        a -> b;
    }
}

fn main() {}
