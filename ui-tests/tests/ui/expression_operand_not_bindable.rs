use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaContext;
use std::sync::Arc;

fn build(ctx: &Arc<CudaContext>) -> graph_runtime::Result<()> {
    let n = 16u32;
    let _graph = cuda_graph! {
        graph(ctx) {
            // `&n` is a reference to a u32, not a slice, a vector or an event.
            k: kernel kernels::AddOne<<<1, 32>>>(&n, n);
        }
    }?;
    Ok(())
}

fn main() {
    let _ = build;
}
