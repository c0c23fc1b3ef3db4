//! Device buffers a graph owns ([`Graph::add_buffer`](crate::Graph::add_buffer)):
//! allocated for the graph, used by its nodes, and reached between launches
//! only through its execs ([`Exec::buffer`](crate::Exec::buffer)). cudarc
//! does not track them, so a launch records no event per buffer: a graph's
//! buffers are ordered together, by the stream of their last use. A launch
//! or an access on that stream needs nothing more (the stream orders it);
//! one on another stream first records one event on the last stream (it
//! covers everything queued there so far) and waits for it. The cost of a
//! launch therefore does not grow with the number of buffers.
//!
//! They are freed, on the stream of their last use (after it), when the last
//! of the graph, its clones and its execs is gone. An exec that is
//! `mem::forget`-ed keeps them: leaked, never freed under its work.

use crate::result;
use cudarc::driver::{sys, CudaContext, CudaEvent, CudaStream, DriverError, SyncOnDrop};
use std::sync::Arc;

/// `CU_STREAM_PER_THREAD`: another stream on every thread, so two uses on it
/// are never known to be on one stream.
const PER_THREAD_STREAM: usize = 0x2;

/// The buffers one resource set owns, and their last use.
pub(crate) struct OwnedBuffers {
    /// Device addresses and sizes in bytes, each of a `cuMemAllocAsync`.
    allocations: Vec<(sys::CUdeviceptr, usize)>,
    /// Recorded on the stream of the last use when a use on another stream
    /// must wait for it (or, after an access, by cudarc's guard).
    event: Arc<CudaEvent>,
    /// The context's default stream: the buffers are made on it, and freed
    /// on it when their last use was an access.
    home: Arc<CudaStream>,
    last: LastUse,
}

/// Where the buffers' last use is.
enum LastUse {
    /// Queued on this stream, not recorded: a use on another stream
    /// records the event there first.
    Stream(Arc<CudaStream>),
    /// Recorded in the event (an access: cudarc's guard records it after
    /// the call that used the buffer).
    Event,
}

impl std::fmt::Debug for OwnedBuffers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnedBuffers")
            .field("buffers", &self.allocations.len())
            .finish()
    }
}

impl OwnedBuffers {
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> std::result::Result<Self, DriverError> {
        let event = Arc::new(ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))?);
        let home = ctx.default_stream();
        Ok(OwnedBuffers {
            allocations: Vec::new(),
            event,
            last: LastUse::Stream(home.clone()),
            home,
        })
    }

    /// `bytes` zeroed bytes (at least one), allocated and zeroed on the
    /// default stream after the buffers' last use: every later use is
    /// ordered after the zeroing.
    pub(crate) fn allocate(&mut self, bytes: usize) -> std::result::Result<u64, DriverError> {
        let home = self.home.clone();
        self.order(&home)?;
        result::bind(home.context())?;
        let bytes = bytes.max(1);
        // SAFETY: the stream is live and its context current (the order
        // above refused it if it was capturing); the memory is zeroed on
        // the same stream before anything else can use it.
        let ptr = unsafe { cudarc::driver::result::malloc_async(home.cu_stream(), bytes) }?;
        self.allocations.push((ptr, bytes));
        // SAFETY: `ptr` is `bytes` bytes allocated above, on this stream.
        unsafe { cudarc::driver::result::memset_d8_async(ptr, 0, bytes, home.cu_stream()) }?;
        self.last = LastUse::Stream(home);
        Ok(ptr)
    }

    /// Makes `stream` wait for the buffers' last use, unless it was queued
    /// on `stream`. Refused (`CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`) when
    /// `stream`, or the stream of an unrecorded last use, is capturing: an
    /// event recorded or waited for there would be captured, and nothing
    /// could wait for the work.
    pub(crate) fn order(&self, stream: &CudaStream) -> std::result::Result<(), DriverError> {
        let capture = DriverError(sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
        // SAFETY: the stream is live (borrowed).
        if unsafe { result::is_capturing(stream.cu_stream()) }? {
            return Err(capture);
        }
        match &self.last {
            LastUse::Stream(last) if same_stream(last, stream) => return Ok(()),
            LastUse::Stream(last) => {
                // SAFETY: `last` is live (held).
                if unsafe { result::is_capturing(last.cu_stream()) }? {
                    return Err(capture);
                }
                result::bind(last.context())?;
                // SAFETY: the event is of the context of `last` (the
                // buffers' context), current; both are live.
                unsafe {
                    cudarc::driver::result::event::record(self.event.cu_event(), last.cu_stream())
                }?;
            }
            LastUse::Event => {}
        }
        // SAFETY: the stream and the event are live. (A stream may wait for
        // an event of another context.)
        unsafe {
            cudarc::driver::result::stream::wait_event(
                stream.cu_stream(),
                self.event.cu_event(),
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        }
    }

    /// Notes a launch queued on `stream` (which waited for the use before,
    /// [`OwnedBuffers::order`]) as the buffers' last use.
    pub(crate) fn launched_on(&mut self, stream: &Arc<CudaStream>) {
        if !matches!(&self.last, LastUse::Stream(last) if Arc::ptr_eq(last, stream)) {
            self.last = LastUse::Stream(stream.clone());
        }
    }

    /// An access on `stream` (which waited for the use before): the guard
    /// to hand cudarc, which records the access in `event` (this set's:
    /// [`OwnedBuffers::event`]) once its call is queued, or, where it would
    /// not record (another context, the per-thread default stream, tracking
    /// off), waits for the call.
    pub(crate) fn accessed_on<'s>(
        &mut self,
        event: &'s CudaEvent,
        stream: &'s CudaStream,
    ) -> SyncOnDrop<'s> {
        let recorded = stream.cu_stream() as usize != PER_THREAD_STREAM
            && stream.context().cu_ctx() == self.event.context().cu_ctx()
            && stream.context().is_managing_stream_synchronization();
        match recorded {
            true => {
                self.last = LastUse::Event;
                SyncOnDrop::Record(Some((event, stream)))
            }
            false => SyncOnDrop::Sync(Some(stream)),
        }
    }

    /// The event a use on another stream waits for.
    pub(crate) fn event(&self) -> &Arc<CudaEvent> {
        &self.event
    }

    /// Whether `bytes` bytes at `ptr` lie within one of the buffers.
    pub(crate) fn contains(&self, ptr: u64, bytes: usize) -> bool {
        self.allocations.iter().any(|&(start, len)| {
            ptr >= start && ptr.saturating_add(bytes as u64) <= start + len as u64
        })
    }

    /// The context's default stream, where the buffers were made.
    pub(crate) fn home(&self) -> &Arc<CudaStream> {
        &self.home
    }
}

/// Whether two streams are one (never for the per-thread default stream:
/// another stream on every thread).
fn same_stream(a: &CudaStream, b: &CudaStream) -> bool {
    a.cu_stream() as usize != PER_THREAD_STREAM && a.cu_stream() == b.cu_stream()
}

impl Drop for OwnedBuffers {
    fn drop(&mut self) {
        // Freed on the default stream, after the last use (ordered).
        let home = self.home.clone();
        if self.order(&home).is_err() {
            // A capture began on a stream the free must follow: keep the
            // memory.
            return;
        }
        let ctx = home.context();
        ctx.record_err(result::bind(ctx));
        for &(ptr, _) in &self.allocations {
            // SAFETY: each was allocated once by `allocate` and is freed once,
            // here, after its last use (the default stream waited for it).
            // No graph, clone or exec that could use it is left (this is
            // dropped with the last resource set that holds it).
            let freed = unsafe { cudarc::driver::result::free_async(ptr, home.cu_stream()) };
            ctx.record_err(freed);
        }
    }
}
