// The expression form: a kernel argument that reaches the graph being
// built (the closure's parameter) and adds a node the macro never checked.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::{CudaContext, CudaSlice};
use std::sync::Arc;

fn build(ctx: &Arc<CudaContext>, mut x: CudaSlice<f32>, n: u32) -> graph_runtime::Result<usize> {
    let graph = cuda_graph! {
        graph(ctx) {
            k: kernel kernels::Scale<<<1, 32>>>(&mut x, 2.0f32, { __graph.add_empty("smuggled", &[]).unwrap(); n });
        }
    }?;
    Ok(graph.node_count())
}

fn main() {
    let _ = build;
}
