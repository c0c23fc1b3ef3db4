// In the expression form, `&*x` of `x: &mut CudaSlice` passed to a
// parameter that writes: the error names `x` and offers `&mut *x`.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::{CudaContext, CudaSlice};
use std::sync::Arc;

fn build(ctx: &Arc<CudaContext>, x: &mut CudaSlice<f32>) -> graph_runtime::Result<usize> {
    let graph = cuda_graph! {
        graph(ctx) {
            bump: kernel kernels::AddOne<<<1, 32>>>(&*x, 32u32);
        }
    }?;
    Ok(graph.node_count())
}

fn main() {
    let _ = build;
}
