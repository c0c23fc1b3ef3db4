//! The perf-scaling graphs written with `cuda_graph!`: the 1,000-long
//! chains generated here by build.rs (compiled at opt-level 0, see the
//! workspace Cargo.toml), the 10- and 100-long ones in graph-bench-shapes
//! (compiled optimized); and the PDL chains.

use graph_runtime::cudarc::driver::CudaSlice;

/// The 1,000-long chains and the PDL chains.
mod long {
    use super::CudaSlice;
    include!(concat!(env!("OUT_DIR"), "/chains.rs"));
}

pub use long::{build_pdl_prologue, build_pdl_tiny, PDL_PROLOGUE_LENGTH};

/// Builds the `width` x `length` graph over `bufs` (one buffer per chain).
pub fn build_chain<'a>(
    ctx: &std::sync::Arc<graph_runtime::cudarc::driver::CudaContext>,
    bufs: &'a mut [CudaSlice<f32>],
    width: usize,
    length: usize,
) -> graph_runtime::Result<graph_runtime::Graph<'a>> {
    if length <= 100 {
        graph_bench_shapes::build_chain(ctx, bufs, width, length)
    } else {
        long::build_chain(ctx, bufs, width, length)
    }
}
