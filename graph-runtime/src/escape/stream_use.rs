//! An [`Escaped`] used by a stream launch: the checks and the wait before
//! the kernel is queued (`access`), and the record or host wait after it
//! ([`EscapedUse`]).

use super::{EscapeState, Escaped};
use crate::error::GraphError;
use crate::result;
use cudarc::driver::CudaStream;

impl<T> Escaped<T> {
    /// Makes `stream` wait for the allocation's last operation; the guard
    /// ([`EscapedUse`]) orders a later free after the use. Queues nothing
    /// when it refuses.
    ///
    /// # Errors
    /// [`UseRefused::Capturing`] on a capturing stream (the use would be
    /// recorded into a graph that could run after the allocation is
    /// freed), or when the wait is refused because of a capture (the
    /// stream's own, begun since the check, or the legacy stream's refusal
    /// while a blocking stream captures: the use may be retried); [`AllocationState::Stuck`](crate::error::AllocationState::Stuck) for an allocation a use of
    /// which could not be waited for, or whose last operation was recorded
    /// into another thread's capture (a stream that began one between a
    /// check and a record: no wait can follow the work before it, so the
    /// allocation is kept for good from then on); the driver's error when
    /// the stream refuses the wait otherwise and the host cannot wait
    /// either.
    pub(crate) fn access<'s>(
        &'s self,
        stream: &'s CudaStream,
        exclusive: bool,
    ) -> std::result::Result<EscapedUse<'s>, UseRefused> {
        let state = &self.held.state;
        let refused = |error| UseRefused::Error(error);
        // SAFETY: the stream is live (borrowed).
        match unsafe { result::is_capturing(stream.cu_stream()) } {
            Ok(false) => {}
            Ok(true) => return Err(UseRefused::Capturing),
            Err(e) => {
                let error = GraphError::driver("cuStreamIsCapturing", e.0, Some(&state.label));
                return Err(refused(error));
            }
        }
        let mut phase = self.lock_for_use("launch").map_err(refused)?;
        // In the relaxed capture mode, as every wait of the runtime's that
        // a refusal would leave stuck: a global-mode capture elsewhere
        // refuses queries and host waits otherwise.
        match result::with_relaxed_capture_mode(|| state.order(&mut phase, stream)) {
            Ok(()) => {}
            // The event's last record was captured (`EscapeState::order`
            // marked the allocation stuck): the work before it (a launch
            // still running, say) can no longer be waited for, and a host
            // wait for the event would not wait for it either.
            Err(_) if phase.stuck => return Err(refused(self.stuck("launch"))),
            // The stream refused the wait because of a capture (its own,
            // begun since the check above, or the legacy stream's while a
            // blocking stream captures): refused, nothing queued; the use
            // may be retried.
            Err(e) if result::refused_by_capture(e.0) => return Err(UseRefused::Capturing),
            Err(_) => {
                // The stream refused the wait: wait for the event here (a
                // later record only follows operations that waited for
                // it), not under the lock (the work behind the event, a
                // host node say, may take it). If the host cannot wait
                // either, nothing is queued: the use is refused.
                drop(phase);
                let waited =
                    result::with_relaxed_capture_mode(|| result::event_synchronize(state.event()));
                if let Err(e) = waited {
                    let error = GraphError::driver("cuEventSynchronize", e.0, Some(&state.label));
                    return Err(refused(error));
                }
            }
        }
        Ok(EscapedUse {
            state,
            stream,
            exclusive,
        })
    }
}

/// Why [`Escaped::access`] refused a use, nothing queued. (Public, hidden,
/// as [`EscapedUse`]: the sealed stream-buffer methods return it.)
#[doc(hidden)]
#[derive(Debug)]
#[non_exhaustive]
pub enum UseRefused {
    /// The stream captures (a capture another thread began, or one the
    /// stream joined through cudarc's waits for the launch's other buffers).
    Capturing,
    /// The allocation's state or the driver refused it.
    Error(GraphError),
}

/// A stream launch's use of an [`Escaped`] (made by its `access`): dropped
/// after the launch is queued, it records the use in the allocation's event
/// (an exclusive use on a stream of its context), or waits for it (a shared
/// use, which may overlap another, and one another context's stream). By
/// the driver directly, whatever error cudarc holds: cudarc's guards skip
/// their records and synchronizes while one is stored, and a third thread
/// may take it back before anything notices.
#[doc(hidden)]
pub struct EscapedUse<'s> {
    state: &'s EscapeState,
    stream: &'s CudaStream,
    exclusive: bool,
}

impl std::fmt::Debug for EscapedUse<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EscapedUse")
            .field("label", &self.state.label)
            .field("exclusive", &self.exclusive)
            .finish()
    }
}

impl Drop for EscapedUse<'_> {
    fn drop(&mut self) {
        let ctx = self.stream.context();
        if self.exclusive {
            let mut phase = self.state.lock();
            if self.state.record(&mut phase, self.stream).is_ok() {
                return;
            }
        }
        // Not recorded: waited for (a failure is kept in the context, as
        // cudarc keeps those of its drops). A use neither recorded nor
        // waited for (a capture another thread began meanwhile refuses the
        // wait, while the kernel runs) orders nothing after it: the
        // allocation is kept for good (stuck), not freed or written under
        // the kernel. A stored error is no guard: anyone may take it back.
        let waited = result::with_relaxed_capture_mode(|| result::synchronize(self.stream));
        if waited.is_err() {
            self.state.lock().stuck = true;
        }
        ctx.record_err(waited);
    }
}
