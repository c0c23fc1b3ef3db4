//! `#[crate_path = path]`: the generated code reaches graph-runtime through
//! `path` (here a re-exporting module, as a crate that renamed the
//! dependency would name it), for the item and the expression form.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::{CudaContext, CudaSlice};
use std::sync::Arc;

mod rt {
    pub use graph_runtime::*;
}

cuda_graph! {
    #[crate_path = crate::rt]
    graph Renamed(x: &mut CudaSlice<f32>, n: u32) {
        bump: kernel kernels::AddOne<<<1, 32>>>(x, n);
    }
}

#[allow(dead_code)]
fn expression(ctx: &Arc<CudaContext>, mut x: CudaSlice<f32>) -> graph_runtime::Result<usize> {
    let graph = cuda_graph! {
        #[crate_path = crate::rt]
        graph(ctx) {
            bump: kernel kernels::AddOne<<<1, 32>>>(&mut x, 32u32);
        }
    }?;
    Ok(graph.node_count())
}

fn main() {
    assert_eq!(Renamed::LABELS, ["bump"]);
}
