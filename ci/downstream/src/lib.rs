//! Uses graph-runtime the way an application would: a graph from the macro,
//! built, instantiated and launched (type-checked only; CI has no GPU).

use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use std::sync::Arc;

cuda_graph! {
    /// Zero `x`, then copy it to `y`.
    pub graph ZeroCopy(x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>) {
        zero: fill x = 0.0f32;
        copy: copy x => y;
        zero -> copy;
    }
}

/// Builds, instantiates and launches the graph once.
pub fn run(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    x: &mut CudaSlice<f32>,
    y: &mut CudaSlice<f32>,
) -> graph_runtime::Result<()> {
    let mut exec = ZeroCopy::build(ctx, x, y)?.instantiate()?;
    exec.launch(stream)?;
    exec.synchronize()
}
