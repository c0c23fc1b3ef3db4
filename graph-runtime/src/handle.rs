//! Handles a kernel receives that name graph objects: a conditional node's
//! handle ([`CondHandle`]) and an exec it may launch from the device
//! ([`DeviceExec`]), with the exec handle's shared owner. They sit below
//! kernels, graphs and execs, which all use them.

use crate::buffer::{DeviceTarget, ResourceSet};
use crate::result;
use cudarc::driver::sys::{self, CUgraphExec};
use cudarc::driver::CudaContext;
use std::sync::Arc;

/// A conditional handle, created on the graph whose conditional node it
/// drives. Pass it to a kernel parameter of type
/// [`Cond`](crate::kernel::Cond) to set it from the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CondHandle {
    raw: sys::CUgraphConditionalHandle,
    /// The graph family (root instance) it belongs to.
    graph: u64,
    level: u64,
}

impl CondHandle {
    /// The 64-bit value a kernel receives.
    pub fn raw(&self) -> u64 {
        self.raw
    }

    pub(crate) fn new(raw: sys::CUgraphConditionalHandle, graph: u64, level: u64) -> CondHandle {
        CondHandle { raw, graph, level }
    }

    pub(crate) fn graph(&self) -> u64 {
        self.graph
    }

    /// The graph level (the graph or body) it was created on.
    pub(crate) fn level(&self) -> u64 {
        self.level
    }
}

/// An exec's driver handle, destroyed when its last owner goes: the
/// `Exec`, and every graph (and exec of it) that may launch it from the
/// device (so a forgotten launcher leaks it rather than launching a
/// destroyed exec).
pub(crate) struct RawExec {
    raw: CUgraphExec,
    ctx: Arc<CudaContext>,
}

// SAFETY: the handle has no thread affinity; it is destroyed once, in Drop,
// when no owner is left; NVIDIA's rule that calls on one exec are
// serialized is kept by `Exec` (`&mut self`, not Sync), the only owner
// that calls the driver with it on the host.
unsafe impl Send for RawExec {}
// SAFETY: as above; shared owners only pass the handle's value to kernels.
unsafe impl Sync for RawExec {}

impl RawExec {
    pub(crate) fn new(raw: CUgraphExec, ctx: Arc<CudaContext>) -> RawExec {
        RawExec { raw, ctx }
    }
}

impl Drop for RawExec {
    fn drop(&mut self) {
        // SAFETY: the last owner is gone. The driver defers destruction
        // until the exec's launches complete; it fails only for invalid
        // handles (kept in the context, as in `RawGraph`).
        result::release_in_drop(&self.ctx, || unsafe { result::exec_destroy(self.raw) });
    }
}

/// An exec a kernel may launch (`cudaGraphLaunch`). Pass it to a kernel
/// parameter of type [`ExecParam`](crate::kernel::ExecParam). The graph
/// that takes it keeps the exec's handle alive and tracks the exec's bound
/// slices at each of its own launches, as if they were its own.
#[derive(Clone, Copy)]
pub struct DeviceExec<'e> {
    raw: u64,
    exec: &'e Arc<RawExec>,
    tracking: &'e Arc<dyn ResourceSet + 'e>,
}

impl std::fmt::Debug for DeviceExec<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceExec")
            .field("raw", &format_args!("{:#x}", self.raw))
            .finish()
    }
}

impl<'e> DeviceExec<'e> {
    pub(crate) fn new(
        raw: u64,
        exec: &'e Arc<RawExec>,
        tracking: &'e Arc<dyn ResourceSet + 'e>,
    ) -> DeviceExec<'e> {
        DeviceExec {
            raw,
            exec,
            tracking,
        }
    }

    /// The 64-bit value a kernel receives.
    pub fn raw(&self) -> u64 {
        self.raw
    }

    /// What a launching graph keeps.
    pub(crate) fn target(&self) -> DeviceTarget<'e> {
        DeviceTarget {
            _exec: self.exec.clone(),
            tracking: self.tracking.clone(),
            context: Arc::as_ptr(&self.exec.ctx) as usize,
        }
    }
}
