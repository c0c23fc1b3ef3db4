//! Graph allocations that outlive the launch that made them (`#[escape]`,
//! or an alloc node nothing in its graph frees). The exec that made one
//! hands it out as an owned [`Escaped`] ([`Exec::take_escaped`]): copies
//! the runtime makes itself read and write it, a declared kernel
//! launched on a stream takes it ([`Kernel::on`](crate::Kernel::on)), another graph binds it
//! ([`Graph::bind_escaped`](crate::Graph::bind_escaped)) to use it in nodes and free it with a free
//! node, and dropping it frees it.
//!
//! Every operation on one allocation (the launches that make, use or free
//! it, the runtime's copies, the free on drop) waits for the one before through
//! one event, and the allocation's state says whether it is live: an exec
//! does not launch again while the allocation its last launch handed out is
//! live, and a graph that freed it does not launch again until it is made
//! again (graph allocations keep their address from launch to launch).
//!
//! [`Exec::take_escaped`]: crate::Exec::take_escaped

use crate::copies::{order_refused, CopyStream};
use crate::error::{AllocationState, DriverResultExt, GraphError, Result};
use crate::ranks::{self, Rank, Ranked};
use crate::result;
use bytemuck::Pod;
use cudarc::driver::{sys, CudaContext, CudaEvent, CudaStream, DriverError};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard};

mod stream_use;

pub use stream_use::{EscapedUse, UseRefused};

/// One allocation's shared state: its event and whether it is live.
pub(crate) struct EscapeState {
    /// The alloc node's label in the graph that makes it.
    pub label: String,
    pub ptr: u64,
    /// Recorded after the last operation on the allocation (an `Option` for
    /// cudarc's `SyncOnDrop::record_event`; always `Some`).
    after: Option<CudaEvent>,
    phase: Mutex<Phase>,
}

#[derive(Debug, Default)]
pub(crate) struct Phase {
    /// Made by the last launch of its exec and not freed since.
    pub live: bool,
    /// Taken from the exec (held by an `Escaped` or a graph), which then
    /// does not free it.
    pub handed_out: bool,
    /// An `Escaped` the caller holds refers to it: no graph may free it
    /// meanwhile (the caller could still read it).
    pub user_held: bool,
    /// Whether `after` was ever recorded (waiting on a fresh event is a
    /// no-op, but costs a call).
    recorded: bool,
    /// Counts the launches that made it: each is a new allocation at the
    /// same address, and a hold on an earlier one frees nothing later.
    pub generation: u64,
    /// A copy of the caller's ([`Escaped::to_host`], [`Escaped::write`])
    /// could not be waited for and may still run: the allocation is never
    /// freed.
    pub stuck: bool,
    /// The runtime's own stream for those copies; made at the first.
    copies: Option<Arc<CopyStream>>,
}

impl std::fmt::Debug for EscapeState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EscapeState")
            .field("label", &self.label)
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .finish()
    }
}

/// What a launch does with an allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// The launching exec's own alloc node makes it.
    Make,
    /// A graph it was bound to uses it.
    Use,
    /// A graph it was bound to uses and frees it.
    Free,
}

impl EscapeState {
    pub(crate) fn new(ctx: &Arc<CudaContext>, label: &str, ptr: u64) -> Result<Arc<Self>> {
        let event = ctx
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .op_at("cuEventCreate", label)?;
        Ok(Arc::new(EscapeState {
            label: label.to_string(),
            ptr,
            after: Some(event),
            phase: Mutex::new(Phase::default()),
        }))
    }

    /// The phase, locked (rank [`Rank::Allocation`]; a panic while
    /// holding it leaves flags, each meaningful).
    pub(crate) fn lock(&self) -> Ranked<MutexGuard<'_, Phase>> {
        ranks::lock(Rank::Allocation, &self.phase)
    }

    fn event(&self) -> &CudaEvent {
        match &self.after {
            Some(event) => event,
            None => unreachable!("made with an event"),
        }
    }

    /// Makes `stream` wait for the last operation on the allocation. By
    /// the driver directly: cudarc's `wait` returns an error another call
    /// stored in the context instead of waiting (see `result::synchronize`).
    /// Refused (`CUDA_ERROR_CAPTURED_EVENT`) if that operation
    /// was recorded into another thread's capture (a launch on a stream
    /// that began one between its check and its record): the wait would
    /// make `stream`, maybe an exec's own, join that capture. The record
    /// then stands for no work that runs, and the operation before it can
    /// no longer be waited for, for good: the allocation is marked stuck
    /// (never freed or made again), and each caller refuses with
    /// [`AllocationState::Stuck`].
    pub(crate) fn order(
        &self,
        phase: &mut Phase,
        stream: &CudaStream,
    ) -> std::result::Result<(), DriverError> {
        // SAFETY: the stream is live (borrowed), of its own context.
        unsafe { self.order_on(phase, stream.context(), stream.cu_stream()) }
    }

    /// [`EscapeState::order`] on a stream handle of `ctx`.
    ///
    /// # Safety
    /// `stream` is live, of `ctx`.
    unsafe fn order_on(
        &self,
        phase: &mut Phase,
        ctx: &CudaContext,
        stream: sys::CUstream,
    ) -> std::result::Result<(), DriverError> {
        if phase.recorded {
            result::bind(ctx)?;
            // SAFETY: the stream (forwarded from the caller) and the event
            // (owned) are live; the stream's context is current (an event
            // of another context may be waited for); every record of the
            // event takes the lock `phase` is held under.
            let waited = unsafe { result::wait_uncaptured(stream, self.event().cu_event()) };
            if matches!(&waited, Err(e) if e.0 == sys::CUresult::CUDA_ERROR_CAPTURED_EVENT) {
                phase.stuck = true;
            }
            waited?;
        }
        Ok(())
    }

    /// Records `stream`'s work so far as the last operation (by the driver
    /// directly, as `order` waits).
    pub(crate) fn record(
        &self,
        phase: &mut Phase,
        stream: &CudaStream,
    ) -> std::result::Result<(), DriverError> {
        let event = self.event();
        if event.context().cu_ctx() != stream.context().cu_ctx() {
            return Err(DriverError(sys::CUresult::CUDA_ERROR_INVALID_CONTEXT));
        }
        result::bind(stream.context())?;
        // SAFETY: the event and stream are live and of one context, current.
        unsafe { cudarc::driver::result::event::record(event.cu_event(), stream.cu_stream()) }?;
        phase.recorded = true;
        Ok(())
    }

    /// As `record`, for an operation that must be waited for by whatever
    /// comes next (a launch, a free): if the record fails, the event
    /// stands for older work, and a later use or free waiting for it would
    /// not follow this one, so the allocation is kept for good (stuck).
    pub(crate) fn record_or_stick(
        &self,
        phase: &mut Phase,
        stream: &CudaStream,
    ) -> std::result::Result<(), DriverError> {
        let recorded = self.record(phase, stream);
        if recorded.is_err() {
            phase.stuck = true;
        }
        recorded
    }

    /// Frees the live allocation on `stream`, after its last operation.
    pub(crate) fn free_live(
        &self,
        phase: &mut Phase,
        stream: &CudaStream,
    ) -> std::result::Result<(), DriverError> {
        self.order(phase, stream)?;
        // SAFETY: the allocation is live (made by a launch, not freed since:
        // every free goes through this state), and the stream waits for
        // every earlier operation on it.
        unsafe { cudarc::driver::result::free_async(self.ptr, stream.cu_stream()) }?;
        phase.live = false;
        Ok(())
    }

    /// Frees the allocation on `stream` after its last operation, if it is
    /// live and (with `only_if_kept`) was not handed out. For destructors:
    /// the driver's error, for them to keep in the context.
    pub(crate) fn free(
        &self,
        stream: &CudaStream,
        only_if_kept: bool,
    ) -> std::result::Result<(), DriverError> {
        let generation = self.lock().generation;
        self.free_generation(stream, only_if_kept, generation)
    }

    /// As `free`, only if the live allocation is the one of `generation`.
    fn free_generation(
        &self,
        stream: &CudaStream,
        only_if_kept: bool,
        generation: u64,
    ) -> std::result::Result<(), DriverError> {
        let mut phase = self.lock();
        if !phase.live
            || phase.generation != generation
            || (only_if_kept && phase.handed_out)
            || phase.stuck
        {
            return Ok(());
        }
        result::bind(stream.context())?;
        // A stream that began a capture since would record the wait and
        // the free into the capture, to run (if ever) when its graph does,
        // maybe after the allocation was made again at the same address:
        // the allocation is kept instead, for good (stuck).
        // SAFETY: the stream is live (borrowed).
        if unsafe { result::is_capturing(stream.cu_stream()) }.unwrap_or(true) {
            phase.stuck = true;
            return Ok(());
        }
        self.free_live(&mut phase, stream)?;
        self.record_or_stick(&mut phase, stream)
    }

    /// Hands the allocation out of the exec that made it: its generation.
    pub(crate) fn hand_out(&self) -> Result<u64> {
        let mut phase = self.lock();
        let refused = |state| GraphError::AllocationRefused {
            operation: "take_escaped",
            label: self.label.clone(),
            state,
        };
        if !phase.live {
            return Err(refused(AllocationState::NotMade));
        }
        if phase.handed_out {
            return Err(refused(AllocationState::AlreadyTaken));
        }
        if phase.stuck {
            return Err(refused(AllocationState::Stuck));
        }
        phase.handed_out = true;
        phase.user_held = true;
        Ok(phase.generation)
    }

    /// An `Escaped` the caller held is gone (bound to a graph, or dropped).
    fn release_user(&self) {
        self.lock().user_held = false;
    }
}

/// An allocation held for freeing: by an [`Escaped`], or by a graph it was
/// bound to (in the graph's resources). Dropping it frees the allocation
/// if it is live.
pub(crate) struct Held {
    pub state: Arc<EscapeState>,
    pub stream: Arc<CudaStream>,
    /// Held by the caller's `Escaped` (not yet bound to a graph).
    by_user: bool,
    /// Which of the allocations made at this address it holds: a graph
    /// that still holds an earlier one, freed since, must not free a later
    /// one an `Escaped` holds.
    generation: u64,
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.state.fmt(f)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // The caller's uses of an `Escaped` end with cudarc's guards, whose
        // records and synchronizes are skipped while an error is stored in
        // the context (see `result::synchronize`): with one stored, the
        // event may not cover the last use, so the whole context is waited
        // for (by the driver directly) before the free. A wait refused by a
        // capture leaves the allocation unfreed.
        let ctx = self.stream.context();
        if self.by_user {
            if let Err(stored) = ctx.check_err() {
                ctx.record_err::<()>(Err(stored));
                match result::with_relaxed_capture_mode(|| result::context_synchronize(ctx)) {
                    Ok(()) => {}
                    Err(e) if result::refused_by_capture(e.0) => return,
                    // A fault: nothing runs any more.
                    Err(e) => ctx.record_err::<()>(Err(e)),
                }
            }
        }
        // A failure cannot be returned from Drop: it is kept in the context,
        // as cudarc keeps its own, for the next checked call to report.
        let freed = self
            .state
            .free_generation(&self.stream, false, self.generation);
        self.stream.context().record_err(freed);
        if self.by_user {
            self.state.release_user();
        }
    }
}

/// A graph allocation taken from the exec whose launch made it
/// ([`Exec::take_escaped`](crate::Exec::take_escaped)): `len` elements of
/// `T` at a fixed address, live until freed. Read and write it from the
/// host with [`Escaped::to_host`] and [`Escaped::write`] (copies the
/// runtime makes itself); use it in declared kernels launched on a stream
/// ([`StreamLaunch::bind`](crate::kernel::StreamLaunch::bind)); hand it to
/// another graph with [`Graph::bind_escaped`](crate::Graph::bind_escaped)
/// to use it there and free it with a free node; or drop it to free it.
/// Its exec launches again only once it is freed (the next launch makes it
/// anew, at the same address). A stream launch on a capturing stream is
/// refused (`LaunchRefusal::Capturing`) before anything is queued; each
/// `Escaped` it binds asks again before its wait. (A capture another
/// thread begins on a stream it shares with the launch after the last
/// check is the window the crate docs leave open: do not begin captures
/// on a stream another thread uses.)
///
/// A copy or a stream launch's read that cannot be waited for (another
/// thread's global-mode capture refusing the wait, say) may still run:
/// the allocation is then *stuck*, and so is one whose last use was
/// recorded into another thread's capture (a stream that began one
/// between a check and a record). Dropping it frees nothing, the exec
/// that made it does not launch again, copies and stream launches are
/// refused ([`AllocationState::Stuck`]), and
/// [`Graph::bind_escaped`](crate::Graph::bind_escaped) gives a `Buf`
/// every node refuses. Memory is leaked; nothing reads freed memory. (A
/// global-mode capture that another thread runs meanwhile may refuse such
/// a wait and leave the allocation stuck though nothing went wrong:
/// capture in thread-local or relaxed mode next to escaped allocations.)
///
/// It is not a cudarc `DevicePtr`: cudarc's copies ask each operand for
/// its address in turn, and caller code (another operand's `DevicePtrMut`,
/// or a `DevicePtr` that delegates to this one and names another
/// context's stream) could run between the checks made here and the copy
/// cudarc then queues (a capture begun there would record the copy into a
/// graph that may run after the allocation is freed).
pub struct Escaped<T> {
    held: Held,
    len: usize,
    _element: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Escaped<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Escaped")
            .field("label", &self.held.state.label)
            .field("ptr", &format_args!("{:#x}", self.held.state.ptr))
            .field("len", &self.len)
            .finish()
    }
}

impl<T> Escaped<T> {
    pub(crate) fn new(
        state: Arc<EscapeState>,
        stream: Arc<CudaStream>,
        len: usize,
        generation: u64,
    ) -> Self {
        Escaped {
            held: Held {
                state,
                stream,
                by_user: true,
                generation,
            },
            len,
            _element: PhantomData,
        }
    }

    /// The device address (fixed across launches of the exec that makes it).
    pub fn device_ptr(&self) -> u64 {
        self.held.state.ptr
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The alloc node's label in the graph that made it.
    pub fn label(&self) -> &str {
        &self.held.state.label
    }

    /// The stream of the launch that made it (a stream of its context).
    pub(crate) fn home(&self) -> &Arc<CudaStream> {
        &self.held.stream
    }
}

impl<T: Pod> Escaped<T> {
    /// The elements, copied to the host. Blocks until the allocation's
    /// last use (the launch that made it, say) and the copy are done.
    ///
    /// # Errors
    /// [`GraphError::StreamRefused`] when the allocation's last use was
    /// recorded in a capture (the copy would join it; nothing is queued),
    /// or when the runtime's copy stream joined one (the allocation is
    /// then stuck: see [`Escaped`]); [`GraphError::Driver`] when the copy
    /// fails (or a launch before it faulted), or cannot be waited for
    /// (stuck).
    pub fn to_host(&self) -> Result<Vec<T>> {
        let host = vec![T::zeroed(); self.len];
        let ptr = self.held.state.ptr;
        // SAFETY: `host` holds `len` elements, the allocation as many from
        // `ptr` (live: held); `copy` waits for the copy.
        self.copy("cuMemcpyDtoHAsync", host, |stream, host| unsafe {
            cudarc::driver::result::memcpy_dtoh_async(host, ptr, stream)
        })
    }

    /// Writes `host` into the allocation.
    ///
    /// # Errors
    /// As [`Escaped::to_host`].
    ///
    /// # Panics
    /// If `host` does not hold exactly `len` elements.
    pub fn write(&mut self, host: &[T]) -> Result<()> {
        assert_eq!(
            host.len(),
            self.len,
            "Escaped::write: {} elements into an allocation of {}",
            host.len(),
            self.len
        );
        let ptr = self.held.state.ptr;
        // Copied through a vector of the runtime's own (the copy is
        // asynchronous for page-locked host memory).
        // SAFETY: `staging` holds `len` elements, the allocation as many
        // from `ptr`; `copy` waits for the copy.
        self.copy(
            "cuMemcpyHtoDAsync",
            host.to_vec(),
            |stream, staging| unsafe {
                cudarc::driver::result::memcpy_htod_async(ptr, staging, stream)
            },
        )
        .map(drop)
    }

    /// Makes `work` on the runtime's copy stream after the allocation's
    /// last operation (its event, waited for by the stream) and waits for
    /// it; no caller code runs between the checks and the copy. The phase
    /// lock is held only to queue the wait. A copy that may still run when
    /// the call returns leaves the allocation stuck: never freed.
    fn copy(
        &self,
        operation: &'static str,
        host: Vec<T>,
        work: impl FnOnce(sys::CUstream, &mut [T]) -> std::result::Result<(), DriverError>,
    ) -> Result<Vec<T>> {
        let state = &self.held.state;
        let ctx = self.held.stream.context();
        let copies = {
            let mut phase = self.lock_for_use(operation)?;
            let copies = match &phase.copies {
                Some(copies) => copies.clone(),
                None => {
                    let made = CopyStream::new(ctx).op_at("cuStreamCreate", &state.label)?;
                    phase.copies.insert(Arc::new(made)).clone()
                }
            };
            if phase.recorded {
                result::bind(ctx).op("cuCtxSetCurrent")?;
                // SAFETY: the stream (the runtime's own) and the event are
                // live, of the allocation's context, current; its records
                // take the lock held here. A record captured by another
                // thread's capture (the launch before was captured) is
                // refused: nothing outside it can wait.
                // (In the relaxed capture mode: a global-mode capture
                // elsewhere would refuse the query.)
                let waited = result::with_relaxed_capture_mode(|| unsafe {
                    state.order_on(&mut phase, ctx, copies.raw())
                });
                match waited {
                    Ok(()) => {}
                    Err(_) if phase.stuck => return Err(self.stuck(operation)),
                    Err(e) => return Err(order_refused(operation, e)),
                }
            }
            copies
        };
        copies.copy_and_wait(operation, host, work, || state.lock().stuck = true)
    }
}

impl<T> Escaped<T> {
    /// Locks the allocation's phase for a use (`operation`). Held by the
    /// caller, the allocation is live: nothing else frees it (asserted all
    /// the same: a use after a free is a panic, not a read of freed
    /// memory). A stuck one is refused: a use before it may still run.
    fn lock_for_use(&self, operation: &'static str) -> Result<Ranked<MutexGuard<'_, Phase>>> {
        let state = &self.held.state;
        let phase = state.lock();
        assert!(
            phase.live && phase.generation == self.held.generation,
            "the allocation of `{}` (an Escaped) was freed while held",
            state.label
        );
        if phase.stuck {
            return Err(self.stuck(operation));
        }
        Ok(phase)
    }

    /// The refusal of a use of a stuck allocation.
    fn stuck(&self, operation: &'static str) -> GraphError {
        GraphError::AllocationRefused {
            operation,
            label: self.held.state.label.clone(),
            state: AllocationState::Stuck,
        }
    }

    /// Gives the allocation up to a graph (`Graph::bind_escaped`): the
    /// graph holds it from now on, and may free it. Returns its length and
    /// the hold.
    pub(crate) fn into_bound(self) -> (usize, Held) {
        let mut held = self.held;
        held.by_user = false;
        held.state.release_user();
        (self.len, held)
    }
}
