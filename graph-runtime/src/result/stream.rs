//! Stream state, in the thin layer: whether a stream captures or is done,
//! which refusals are a capture's, and a wait that refuses an event whose
//! last record was captured. Safety and errors as in [`super`].

use super::R;
use cudarc::driver::sys::{self, CUstream};
use cudarc::driver::DriverError;
use std::mem::MaybeUninit;

/// Makes `stream` wait for `event`'s last record, refused
/// (`CUDA_ERROR_CAPTURED_EVENT`, the query's answer) if that record was
/// captured:
/// `stream` would then join the capture (or, the capture ended, wait for
/// nothing). The driver says so of an event's last record
/// (`CUDA_ERROR_CAPTURED_EVENT` from a query) until it is recorded again,
/// so the query comes first and a refused wait is never made: `stream`
/// joins no capture. (The query may invalidate a capture still running:
/// on the H200 its `end_capture` then failed with
/// `CUDA_ERROR_STREAM_CAPTURE_INVALIDATED`.) Once that capture ended, the
/// H200 answers `CUDA_ERROR_INVALID_VALUE` to the query, to a wait and to
/// a host synchronize alike (the event stands for no work, also once the
/// captured graph ran): returned as `CUDA_ERROR_CAPTURED_EVENT` too, since
/// the event is live and that is what it means.
///
/// # Safety
/// `stream` and `event` are live, and `event` is not recorded between the
/// query and the wait (the caller holds the lock its every record takes).
pub unsafe fn wait_uncaptured(stream: CUstream, event: sys::CUevent) -> R<()> {
    // SAFETY: forwarded from the caller.
    match unsafe { cudarc::driver::result::event::query(event) } {
        Ok(()) => {}
        Err(e) if e.0 == sys::CUresult::CUDA_ERROR_NOT_READY => {}
        // Captured by a capture since ended (above).
        Err(e) if e.0 == sys::CUresult::CUDA_ERROR_INVALID_VALUE => {
            return Err(DriverError(sys::CUresult::CUDA_ERROR_CAPTURED_EVENT))
        }
        // Captured: returned as is, so that callers can tell it from a
        // refusal of the wait itself (`stream` capturing, say).
        Err(e) => return Err(e),
    }
    // SAFETY: forwarded from the caller.
    unsafe {
        cudarc::driver::result::stream::wait_event(
            stream,
            event,
            sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
        )
    }
}

/// Makes `waiter` wait for the work queued on `stream` so far, through an
/// event made, recorded and released here, by the driver directly:
/// cudarc's `join` makes its event through `bind_to_thread`, which takes
/// an error stored in the context back and returns it instead of joining.
/// When `waiter` refuses the wait (the legacy stream while another stream
/// captures, say) or the record is refused, the host waits for that work
/// instead, so whatever `waiter` runs next follows it all the same; an
/// error means that wait failed too.
///
/// # Safety
/// Both streams are live, of the current context.
pub unsafe fn join(waiter: CUstream, stream: CUstream) -> R<()> {
    use cudarc::driver::result::{event, stream as streams};
    let made = event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)?;
    // SAFETY: the event was just made; the streams are live (forwarded).
    let recorded = unsafe { event::record(made, stream) };
    let joined = match recorded {
        // SAFETY: as above; the event is recorded.
        Ok(()) => unsafe {
            streams::wait_event(waiter, made, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT)
        }
        // SAFETY: as above (a host wait for the recorded work).
        .or_else(|_| unsafe { event::synchronize(made) }),
        // SAFETY: the stream is live (forwarded): a host wait for its work.
        Err(_) => unsafe { streams::synchronize(stream) },
    };
    // SAFETY: made here, destroyed once (the driver releases it once the
    // wait no longer needs it).
    let destroyed = unsafe { event::destroy(made) };
    joined.and(destroyed)
}

/// Runs `wait` (host waits) with this thread's stream-capture interaction
/// mode relaxed, then restores the mode: a thread with a global or
/// thread-local capture of its own, or any thread while another runs a
/// global one, is refused "potentially unsafe" calls (synchronizes among
/// them), and a wait that must happen (an exec's drop, whose borrows end
/// with it) must not be refused by a capture that does not involve what it
/// waits for.
pub fn with_relaxed_capture_mode<T>(wait: impl FnOnce() -> T) -> T {
    /// Puts the thread's earlier mode back when dropped, on a panic too.
    struct Restore(Option<sys::CUstreamCaptureMode>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(mut mode) = self.0.take() {
                // SAFETY: `mode` is a valid place for the exchange.
                let _ = unsafe { sys::cuThreadExchangeStreamCaptureMode(&mut mode) };
            }
        }
    }
    let mut mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
    // SAFETY: `mode` is a valid place for the exchange to read and write.
    let exchanged = unsafe { sys::cuThreadExchangeStreamCaptureMode(&mut mode) }.result();
    let _restore = Restore(exchanged.is_ok().then_some(mode));
    wait()
}

/// Whether `stream` is the per-thread default stream
/// (`CU_STREAM_PER_THREAD`): its handle names another stream on every
/// thread.
pub fn is_per_thread(stream: &cudarc::driver::CudaStream) -> bool {
    stream.cu_stream() as usize == 0x2
}

/// Whether `stream` is capturing (actively, or invalidated by its work and
/// not yet ended): work queued on it is recorded, not run. A query the
/// driver refuses because of a capture (the legacy stream while another
/// stream captures) counts as capturing.
///
/// # Safety
/// `stream` is live.
pub unsafe fn is_capturing(stream: CUstream) -> R<bool> {
    let mut status = MaybeUninit::uninit();
    // SAFETY: forwarded from the caller.
    match unsafe { sys::cuStreamIsCapturing(stream, status.as_mut_ptr()) }.result() {
        Ok(()) => {}
        Err(e) if refused_by_capture(e.0) => return Ok(true),
        Err(e) => return Err(e),
    }
    // SAFETY: initialised by the successful call.
    let status = unsafe { status.assume_init() };
    Ok(status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
}

/// Whether every operation queued on `stream` is done (`Ok(false)`: some
/// is pending; an error: the stream refuses the query, as a capturing one).
///
/// # Safety
/// `stream` is live.
pub unsafe fn stream_done(stream: CUstream) -> R<bool> {
    // SAFETY: forwarded from the caller.
    match unsafe { sys::cuStreamQuery(stream) } {
        sys::CUresult::CUDA_SUCCESS => Ok(true),
        sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
        other => Err(DriverError(other)),
    }
}

/// Whether `code` is one of the driver's refusals because of a stream
/// capture (`CUDA_ERROR_STREAM_CAPTURE_*`, `CUDA_ERROR_CAPTURED_EVENT`):
/// the call was refused, not failed by the work it would have waited for.
pub fn refused_by_capture(code: sys::CUresult) -> bool {
    use sys::CUresult as C;
    matches!(
        code,
        C::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
            | C::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
            | C::CUDA_ERROR_STREAM_CAPTURE_MERGE
            | C::CUDA_ERROR_STREAM_CAPTURE_UNMATCHED
            | C::CUDA_ERROR_STREAM_CAPTURE_UNJOINED
            | C::CUDA_ERROR_STREAM_CAPTURE_ISOLATION
            | C::CUDA_ERROR_STREAM_CAPTURE_IMPLICIT
            | C::CUDA_ERROR_CAPTURED_EVENT
            | C::CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD
    )
}

/// The id of the capture `stream` is in, active or invalidated by the work
/// (either way it must be ended); `CUDA_ERROR_STREAM_CAPTURE_UNMATCHED` if
/// it is not capturing.
///
/// # Safety
/// `stream` is live.
pub unsafe fn capture_id(stream: CUstream) -> R<u64> {
    let mut status = MaybeUninit::uninit();
    let mut id: u64 = 0;
    // SAFETY: forwarded from the caller.
    // The optional outputs (graph, dependencies, edge data) are not asked
    // for. (`_v3`, CUDA 12.3+, is in every binding cudarc has from 12.8 up.)
    unsafe {
        sys::cuStreamGetCaptureInfo_v3(
            stream,
            status.as_mut_ptr(),
            &mut id,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    }
    .result()?;
    // SAFETY: initialised by the successful call.
    match unsafe { status.assume_init() } {
        sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE => Err(DriverError(
            sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
        )),
        _ => Ok(id),
    }
}
