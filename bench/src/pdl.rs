//! Programmatic dependent launch: chains of PDL-aware kernels joined by
//! ordinary, programmatic and launch-order edges, all built by `cuda_graph!`
//! (chains.rs). Tiny kernels measure the per-node launch floor; kernels with
//! an independent prologue measure how much of it overlaps the previous one.

use crate::scaling::{launches_per_measure, measure, Row};
use crate::timing::Result;
use graph_runtime::cudarc::driver::{sys, CudaContext, CudaStream};
use graph_runtime::EdgeKind;
use std::sync::Arc;

/// The edge kinds compared, in table order.
pub const KINDS: [EdgeKind; 3] = [
    EdgeKind::Full,
    EdgeKind::Programmatic,
    EdgeKind::LaunchOrder,
];

/// Threads per block of the prologue-heavy kernels.
const THREADS: u32 = 256;

/// A chain of `length` `PdlAddOne` kernels (1 x 32 threads) joined by
/// `kind` edges. Checked: every element ends at the number of kernels run.
pub fn tiny(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    kind: EdgeKind,
    length: usize,
    reps: usize,
) -> Result<Row> {
    let mut x = stream.alloc_zeros::<f32>(32)?;
    let row = measure(ctx, stream, &mut x, reps, |x| {
        crate::chains::build_pdl_tiny(ctx, x, kind, length)
    })?;
    let expected = (launches_per_measure(reps) * length) as f32;
    let got = stream.clone_dtoh(&x)?;
    if got.iter().any(|v| *v != expected) {
        return Err(format!(
            "PDL tiny chain ({kind:?}): expected {expected}, got {}",
            got[0]
        )
        .into());
    }
    Ok(row)
}

/// The number of SMs: the prologue-heavy chains run one block per SM.
pub fn sm_count(ctx: &Arc<CudaContext>) -> Result<u32> {
    let count = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
    Ok(u32::try_from(count)?)
}

/// A chain of `PDL_PROLOGUE_LENGTH` `PdlPrologueStep` kernels (one block of
/// 256 threads per SM, `work` prologue steps) joined by `kind` edges.
/// Returns the row and the result's bits, which the caller compares across
/// edge kinds; a sample of elements is checked against the host's value.
pub fn prologue(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    kind: EdgeKind,
    work: u32,
    reps: usize,
) -> Result<(Row, Vec<u32>)> {
    let blocks = sm_count(ctx)?;
    let n = blocks * THREADS;
    let x0: Vec<f32> = (0..n).map(|i| (i % 977) as f32 * 0.25).collect();
    let mut x = stream.clone_htod(&x0)?;
    let row = measure(ctx, stream, &mut x, reps, |x| {
        crate::chains::build_pdl_prologue(ctx, x, kind, blocks, n, work)
    })?;
    let got = stream.clone_dtoh(&x)?;
    let steps = launches_per_measure(reps) * crate::chains::PDL_PROLOGUE_LENGTH;
    for i in (0..n as usize).step_by(97) {
        let prologue = kernels::pdl_prologue(i as u32, work);
        let expected = (0..steps).fold(x0[i], |v, _| v.mul_add(0.5, prologue));
        if got[i].to_bits() != expected.to_bits() {
            return Err(format!(
                "PDL prologue chain ({kind:?}): x[{i}] = {}, expected {expected}",
                got[i]
            )
            .into());
        }
    }
    Ok((row, got.iter().map(|v| v.to_bits()).collect()))
}
