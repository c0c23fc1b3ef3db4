// The expression form: a graph built from variables in scope.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::{CudaContext, CudaSlice};
use std::sync::Arc;

#[allow(dead_code)]
fn build(ctx: &Arc<CudaContext>, x_h: Vec<f32>, mut x: CudaSlice<f32>, n: u32) -> graph_runtime::Result<usize> {
    let graph = cuda_graph! {
        graph(ctx) {
            cond go = 1;
            load: copy &x_h => &mut x;
            twice: kernel kernels::Scale<<<1, 32>>>(&mut x, 2.0f32, n);
            branch: if go { again: kernel kernels::Scale<<<1, 32>>>(&mut x, 2.0f32, n); }
            load -> twice -> branch;
        }
    }?;
    Ok(graph.node_count())
}

fn main() {}
