// A parameter may have any name, also one the generated builder uses for
// its own arguments (`ctx`).
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Named(ctx: &mut CudaSlice<f32>, n: u32) {
        k: kernel kernels::AddOne<<<1, 32>>>(ctx, n);
    }
}

fn main() {}
