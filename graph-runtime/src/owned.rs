//! Device buffers a graph owns ([`Graph::add_buffer`](crate::Graph::add_buffer)):
//! allocated for the graph, used by its nodes, and reached between launches
//! only through its execs ([`Exec::buffer`](crate::Exec::buffer): copies
//! the runtime makes itself, on a stream of its own that waits for the
//! last use, or on an exec's own stream when the last use was queued
//! there; waited for).
//! cudarc does not track them, so a launch records no event per buffer: a
//! graph's buffers are ordered together, by the stream of their last use
//! (a launch). A use on that stream needs nothing more (the stream orders
//! it); one on another stream first records one event on the last stream
//! (it covers everything queued there so far, the last use included) and
//! waits for it. No step relies on a record made after a use (cudarc's
//! guards skip theirs while an error is stored in the context): the record
//! is made by the next use, when it comes. The cost of a launch therefore
//! does not grow with the number of buffers.
//!
//! They are freed, on the context's default stream after their last use,
//! when the last of the graph, its clones and its execs is gone. An exec
//! that is `mem::forget`-ed keeps them: leaked, never freed under its work.

use crate::copies::CopyStream;
use crate::result;
use cudarc::driver::{sys, CudaContext, CudaEvent, CudaStream, DriverError};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The buffers one resource set owns, and their last use.
pub(crate) struct OwnedBuffers {
    /// Device addresses and sizes in bytes, each of a `cuMemAllocAsync`.
    allocations: Vec<(sys::CUdeviceptr, usize)>,
    /// Recorded on the stream of the last use when a use on another stream
    /// must wait for it.
    event: CudaEvent,
    /// The context's default stream: the buffers are made and freed on it.
    home: Arc<CudaStream>,
    /// The stream of the last use, kept alive until the next use records
    /// on it (or finds it is its own).
    last: Arc<CudaStream>,
    /// `last` is a stream no caller gets (an exec's own stream,
    /// `Exec::launch_on_own_stream`): nobody can begin a capture there or
    /// queue work the runtime does not, so a loan copies on it directly.
    /// With the exec's flag of whether it is known not to capture: it can
    /// only join a capture through that exec's launch waits there, and
    /// that exec tracks these buffers (it leaves its stream once it stops
    /// tracking them), so its launches lock them first and are refused
    /// while they are lent: what a loan reads under their lock holds until
    /// the loan ends.
    last_private: Option<Arc<AtomicBool>>,
    /// A stream of the runtime's own for a loan's copies; made at the first.
    copies: Option<Arc<CopyStream>>,
    /// A loan's copy could not be waited for: it may still run. The
    /// buffers stay lent out (no launch follows it) and are never freed.
    pub(crate) stuck: bool,
    /// The host memory of a loan's copy into the caller's memory
    /// (`OwnedMut::copy_to_host`), kept between loans: no allocation per
    /// read. Taken out for a copy (one loan at a time: the buffers are lent).
    pub(crate) staging: Vec<u8>,
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
        let event = ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))?;
        let home = ctx.default_stream();
        Ok(OwnedBuffers {
            allocations: Vec::new(),
            event,
            last: home.clone(),
            last_private: None,
            home,
            copies: None,
            stuck: false,
            staging: Vec::new(),
        })
    }

    /// `bytes` zeroed bytes (at least one), allocated and zeroed on the
    /// default stream after the buffers' last use: every later use is
    /// ordered after the zeroing. (Not while they are lent out: a loan
    /// relies on the last use staying where it found it.)
    pub(crate) fn allocate(&mut self, bytes: usize) -> std::result::Result<u64, DriverError> {
        let home = self.home.clone();
        // Bound first: the capture checks in `order` ask about the null
        // stream of the current context.
        result::bind(home.context())?;
        self.order(&home)?;
        let bytes = bytes.max(1);
        // SAFETY: the stream is live and its context current (the order
        // above refused it if it was capturing); the memory is zeroed on
        // the same stream before anything else can use it.
        let ptr = unsafe { cudarc::driver::result::malloc_async(home.cu_stream(), bytes) }?;
        self.allocations.push((ptr, bytes));
        // SAFETY: `ptr` is `bytes` bytes allocated above, on this stream.
        unsafe { cudarc::driver::result::memset_d8_async(ptr, 0, bytes, home.cu_stream()) }?;
        self.last = home;
        self.last_private = None;
        Ok(ptr)
    }

    /// Makes `stream` (of the buffers' context) wait for the buffers' last
    /// use, unless it was on `stream`. Refused
    /// (`CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`) when `stream`, or the
    /// stream of the last use, is capturing: an event recorded or waited
    /// for there would be captured, and nothing could wait for the work.
    pub(crate) fn order(&self, stream: &CudaStream) -> std::result::Result<(), DriverError> {
        // SAFETY: the stream is live (borrowed).
        unsafe { refuse_capturing(stream.cu_stream()) }?;
        self.follow(stream)
    }

    /// [`OwnedBuffers::order`] for a launch, whose stream the protocol's
    /// first step found not capturing: the same, less that stream's
    /// second capture query (a driver call per launch; the window it
    /// would narrow is the open one the crate docs list).
    pub(crate) fn follow(&self, stream: &CudaStream) -> std::result::Result<(), DriverError> {
        if same_stream(&self.last, stream) {
            return Ok(());
        }
        // SAFETY: the stream is live (borrowed), of the buffers' context.
        unsafe { self.wait_for_last(stream.cu_stream()) }
    }

    /// Makes `stream` wait for an event recorded on the stream of the last
    /// use; refused while that stream captures.
    ///
    /// # Safety
    /// `stream` is live, of the buffers' context.
    unsafe fn wait_for_last(&self, stream: sys::CUstream) -> std::result::Result<(), DriverError> {
        // SAFETY: `last` is live (held).
        unsafe { refuse_capturing(self.last.cu_stream()) }?;
        result::bind(self.last.context())?;
        // SAFETY: the event is of the buffers' context (that of `last`),
        // current; the event and both streams are live (a stream may wait
        // for an event of another context); it is recorded only here, under
        // the lock of the set that holds the buffers (`&self` of a locked
        // set), so not between the wait's query and the wait.
        // A capture begun on `last` by another thread after the check above
        // records the event into the capture: the wait refuses it, before
        // `stream` could join the capture.
        unsafe {
            cudarc::driver::result::event::record(self.event.cu_event(), self.last.cu_stream())?;
            result::wait_uncaptured(stream, self.event.cu_event())
        }
    }

    /// Where a loan's copy goes: the stream of the buffers' last use, if
    /// no caller gets it (the copy follows the use there, with no event);
    /// otherwise the runtime's own copy stream, made to wait for the last
    /// use (one event, no host wait: the loan's only host wait is for its
    /// copy), refused as [`OwnedBuffers::order`] is. (Either stream
    /// captures only if it joined a capture through a wait for a captured
    /// event: the copy checks it.)
    pub(crate) fn copy_stream(&mut self) -> std::result::Result<CopyOn, DriverError> {
        if let Some(uncaptured) = &self.last_private {
            let known = uncaptured.load(Ordering::Acquire);
            return Ok(CopyOn::LastUse(self.last.clone(), known));
        }
        self.ordered_copy_stream().map(CopyOn::Runtime)
    }

    fn ordered_copy_stream(&mut self) -> std::result::Result<Arc<CopyStream>, DriverError> {
        let copies = match &self.copies {
            Some(copies) => copies.clone(),
            None => self
                .copies
                .insert(Arc::new(CopyStream::new(self.home.context())?))
                .clone(),
        };
        // SAFETY: the runtime's own stream, live (held), of the buffers'
        // context; never handed out, so never the last one.
        unsafe { self.wait_for_last(copies.raw()) }?;
        Ok(copies)
    }

    /// Notes `stream`, which waited for the use before
    /// ([`OwnedBuffers::follow`]), as the stream of the buffers' last use:
    /// a launch queued on it (`own`: a stream no caller gets, with its
    /// flag, see `last_private`).
    pub(crate) fn used_on(&mut self, stream: &Arc<CudaStream>, own: Option<&Arc<AtomicBool>>) {
        if !Arc::ptr_eq(&self.last, stream) {
            self.last = stream.clone();
        }
        match (&self.last_private, own) {
            (Some(mine), Some(own)) if Arc::ptr_eq(mine, own) => {}
            _ => self.last_private = own.cloned(),
        }
    }

    /// Whether `bytes` bytes at `ptr` lie within one of the buffers.
    pub(crate) fn contains(&self, ptr: u64, bytes: usize) -> bool {
        self.allocations.iter().any(|&(start, len)| {
            ptr >= start && ptr.saturating_add(bytes as u64) <= start + len as u64
        })
    }
}

/// Where a loan's copy goes ([`OwnedBuffers::copy_stream`]).
pub(crate) enum CopyOn {
    /// The runtime's copy stream, which waited for the buffers' last use.
    Runtime(Arc<CopyStream>),
    /// The stream of the buffers' last use, one no caller gets, and
    /// whether it is known not to capture (then nothing need ask).
    LastUse(Arc<CudaStream>, bool),
}

/// Refuses a capturing stream (`CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`).
///
/// # Safety
/// `stream` is live.
unsafe fn refuse_capturing(stream: sys::CUstream) -> std::result::Result<(), DriverError> {
    // SAFETY: forwarded from the caller.
    if unsafe { result::is_capturing(stream) }? {
        return Err(DriverError(
            sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
        ));
    }
    Ok(())
}

/// Whether two streams are one: the same handle in the same context (two
/// contexts' default streams share the null handle), never the per-thread
/// default stream (another stream on every thread).
fn same_stream(a: &CudaStream, b: &CudaStream) -> bool {
    !result::is_per_thread(a)
        && a.cu_stream() == b.cu_stream()
        && a.context().cu_ctx() == b.context().cu_ctx()
}

impl Drop for OwnedBuffers {
    fn drop(&mut self) {
        if self.stuck {
            // A copy that was not waited for may still use the memory.
            return;
        }
        // Freed on the default stream, after the last use (ordered).
        let home = self.home.clone();
        home.context().record_err(result::bind(home.context()));
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
