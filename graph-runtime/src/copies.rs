//! Copies the runtime makes itself between the host and memory that only
//! it may order (a graph-owned buffer's loan, an [`Escaped`](crate::Escaped)
//! allocation): on a stream of its own, never handed out, so that no
//! caller code runs between its checks and the work it queues and nobody
//! can begin a capture on it; waited for before the call returns.

use crate::error::{DriverResultExt, GraphError, Result, StreamRefusal};
use crate::result;
use cudarc::driver::{sys, CudaContext, DriverError};
use std::sync::Arc;

/// A non-blocking stream of the runtime's own, made by the driver directly
/// (cudarc's `new_stream` may synchronize the whole context when it makes
/// the first stream, which must not happen under the runtime's locks).
/// Destroyed on drop.
pub(crate) struct CopyStream {
    raw: sys::CUstream,
    ctx: Arc<CudaContext>,
}

// SAFETY: a stream handle has no thread affinity; every use binds its
// context first.
unsafe impl Send for CopyStream {}
// SAFETY: as for `Send`: `&CopyStream` only hands the handle out.
unsafe impl Sync for CopyStream {}

impl std::fmt::Debug for CopyStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CopyStream").finish_non_exhaustive()
    }
}

/// What a copy reports when its stream could not be ordered after the
/// work it must follow (`error`, from that wait): a capture refusal as
/// [`StreamRefusal::Capturing`], anything else as the wait's driver error.
pub(crate) fn order_refused(operation: &'static str, error: DriverError) -> GraphError {
    if result::refused_by_capture(error.0) {
        GraphError::StreamRefused {
            operation,
            stream: StreamRefusal::Capturing,
        }
    } else {
        GraphError::driver("cuStreamWaitEvent", error.0, None)
    }
}

impl CopyStream {
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> std::result::Result<Self, DriverError> {
        result::bind(ctx)?;
        let raw = cudarc::driver::result::stream::create(
            cudarc::driver::result::stream::StreamKind::NonBlocking,
        )?;
        Ok(CopyStream {
            raw,
            ctx: ctx.clone(),
        })
    }

    pub(crate) fn raw(&self) -> sys::CUstream {
        self.raw
    }

    /// Queues `work` on the stream, which waited for what the copy must
    /// follow, and waits for it (see [`copy_and_wait`]).
    pub(crate) fn copy_and_wait<T>(
        &self,
        operation: &'static str,
        host: Vec<T>,
        work: impl FnOnce(sys::CUstream, &mut [T]) -> std::result::Result<(), DriverError>,
        stick: impl FnOnce(),
    ) -> Result<Vec<T>> {
        // SAFETY: the stream is live (owned), of `ctx`, never handed out.
        unsafe { copy_and_wait(&self.ctx, (self.raw, false), operation, host, work, stick) }
    }
}

/// Queues `work` (a copy to or from `host`, memory of the runtime's own)
/// on `stream`, which follows what the copy must follow, and waits for it.
/// A stream that joined another thread's capture (through a wait for an
/// event recorded in it) queues nothing: `stick` is called and the call is
/// refused. (`uncaptured`: the stream is known not to capture, and
/// nothing can draw it into a capture before the copy is queued: the
/// driver is not asked.) A copy that cannot be waited for may still run: `stick` is
/// called (its memory is never freed) and `host` is leaked.
///
/// # Safety
/// `stream` is live, of `ctx`, and a stream of the runtime's own: no
/// caller gets it, so nobody can begin a capture on it.
pub(crate) unsafe fn copy_and_wait<T>(
    ctx: &Arc<CudaContext>,
    (stream, uncaptured): (sys::CUstream, bool),
    operation: &'static str,
    mut host: Vec<T>,
    work: impl FnOnce(sys::CUstream, &mut [T]) -> std::result::Result<(), DriverError>,
    stick: impl FnOnce(),
) -> Result<Vec<T>> {
    // SAFETY: the stream is live (the caller's promise).
    if !uncaptured && unsafe { result::is_capturing(stream) }.unwrap_or(true) {
        stick();
        return Err(GraphError::StreamRefused {
            operation,
            stream: StreamRefusal::Capturing,
        });
    }
    result::bind(ctx).op("cuCtxSetCurrent")?;
    let queued = work(stream, &mut host);
    // Waited for even if queuing it failed (the driver may report an
    // earlier error after queuing).
    // In the relaxed capture mode: a global-mode capture elsewhere would
    // refuse the wait, and leave the buffers stuck for nothing.
    let waited = result::with_relaxed_capture_mode(|| {
        // SAFETY: the stream is live, its context current.
        unsafe { cudarc::driver::result::stream::synchronize(stream) }
    });
    match waited {
        Ok(()) => queued.op(operation).map(|()| host),
        Err(e) => {
            std::mem::forget(host);
            stick();
            Err(GraphError::driver("cuStreamSynchronize", e.0, None))
        }
    }
}

impl Drop for CopyStream {
    fn drop(&mut self) {
        let raw = self.raw;
        // Every copy on it was waited for, or its owner is stuck and leaks
        // it. (The driver defers the destruction until its work is done in
        // any case.)
        // SAFETY: made by `new`, destroyed once, here.
        result::release_in_drop(&self.ctx, || unsafe {
            cudarc::driver::result::stream::destroy(raw)
        });
    }
}
