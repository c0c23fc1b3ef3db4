// The expression form: `&mut x` operands race like parameters.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::{CudaContext, CudaSlice};
use std::sync::Arc;

fn build(ctx: &Arc<CudaContext>, x: &mut CudaSlice<f32>, n: u32) {
    let _ = cuda_graph!(graph(ctx) {
        first: kernel kernels::AddOne<<<1, 32>>>(&mut x, n);
        second: copy &mut x => &mut x;
    });
}

fn main() {}
