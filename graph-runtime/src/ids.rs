//! Ids that name graphs, graph allocations, host buffers and stream
//! launches: a buffer's root names the graph (or launch) that bound it.

static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The resource id of no graph (ids start at 1): a buffer bound from
/// another context carries it, so every node refuses it.
pub(crate) const FOREIGN_ROOT: u64 = 0;

/// The root of a part sliced past its buffer's end (`Buf::slice`): every
/// node and update refuses it, naming the node (ids never reach it).
pub(crate) const OUT_OF_RANGE_ROOT: u64 = u64::MAX;

pub(crate) fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}
