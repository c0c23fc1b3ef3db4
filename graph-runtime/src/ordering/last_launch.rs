//! What an exec keeps between its launches for the protocol: its own
//! stream ([`OwnStream`]) and the record of its last launch
//! ([`LastLaunch`]), which its drop may have to wait for.

use super::not_capturing;
use crate::buffer::UseEvent;
use crate::error::{DriverResultExt, Result, StreamRefusal};
use crate::result;
use cudarc::driver::{CudaContext, CudaStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// An exec's own stream ([`Exec::launch_on_own_stream`](crate::Exec::launch_on_own_stream))
/// and what the protocol knows of it. No caller gets it, so nobody begins
/// a capture there: it captures only after joining one, through a wait
/// for an event recorded in a capture, and of the waits queued there only
/// cudarc's for a launch's bound slices (step 4) can be one (the
/// runtime's own ask first). Step 1 asks the driver again only after such
/// a wait.
#[derive(Debug)]
pub(crate) struct OwnStream {
    stream: Arc<CudaStream>,
    /// Not capturing: so found when the last launch there was queued (or
    /// made so), with no wait through cudarc queued there since. Shared
    /// with the graph-owned buffers last used there
    /// (`OwnedBuffers::used_on`), whose loans copy there.
    uncaptured: Arc<AtomicBool>,
}

impl OwnStream {
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        Ok(OwnStream {
            stream: ctx.new_stream().op("cuStreamCreate")?,
            uncaptured: Arc::new(AtomicBool::new(true)),
        })
    }

    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Whether the stream is known not to capture (see the field).
    pub(crate) fn uncaptured(&self) -> &Arc<AtomicBool> {
        &self.uncaptured
    }

    /// Step 1 for a launch there: makes the context current and refuses
    /// the stream if it may be capturing and the driver says it is. The
    /// launch's waits may draw it into a capture: until
    /// [`OwnStream::launched`], it is asked again at the next launch.
    pub(crate) fn check(&mut self, ctx: &Arc<CudaContext>) -> Result<()> {
        ctx.bind_to_thread().op("cuCtxSetCurrent")?;
        if self.uncaptured.swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        not_capturing(&self.stream, "launch", StreamRefusal::Capturing)
    }

    /// A launch was queued there: the stream was not capturing after its
    /// waits (step 5 asked again after any through cudarc).
    pub(crate) fn launched(&mut self) {
        self.uncaptured.store(true, Ordering::Release);
    }
}

/// An exec's side of the protocol, kept between its launches.
#[derive(Debug, Default)]
pub(crate) struct Launches {
    /// Its last launch, recorded for its drop.
    pub(crate) last: LastLaunch,
    /// Room for a launch's records of its slices' events (step 7).
    pub(super) records: Vec<UseEvent>,
}

/// An exec's record of its last launch, for its drop: an event recorded
/// by the driver right after every launch on a caller's stream. On the
/// exec's own stream ([`OwnStream`]) the record waits ([`LastLaunch::defer`])
/// until a later launch there is about to wait through cudarc, which
/// may draw that stream into a capture ([`LastLaunch::flush`]): until
/// then the drop can wait for the stream itself. The exec borrows for its lifetime
/// what its launches use (slices, whose frees cudarc orders only through
/// events a stored error disarms; events of record and wait nodes; host
/// memory of copies): when its drop cannot wait for its stream (a capture
/// began there since), it waits for this event before those borrows end.
/// The event is the driver's, made and destroyed without cudarc, whose
/// calls would take an error stored in the context.
#[derive(Debug, Default)]
pub(crate) struct LastLaunch {
    event: Option<RawEvent>,
    /// The last recorded launch could be neither recorded nor waited for.
    unwaitable: bool,
    /// The last launch was queued on a stream of the exec's own (its own
    /// stream, or one it left since: `Exec::update`) and is not recorded
    /// yet: nothing could draw that stream into a capture since (only a
    /// launch's waits there can, and they flush first; nothing waits on a
    /// stream the exec left).
    deferred: bool,
}

/// A driver event of the exec's context, destroyed on drop.
#[derive(Debug)]
struct RawEvent {
    event: cudarc::driver::sys::CUevent,
    ctx: Arc<CudaContext>,
}

// SAFETY: an event handle has no thread affinity; it is used by the exec
// that owns it, one thread at a time.
unsafe impl Send for RawEvent {}

impl Drop for RawEvent {
    fn drop(&mut self) {
        let event = self.event;
        // SAFETY: made by `LastLaunch::prepare`, destroyed once, here (the
        // driver releases it once pending work no longer needs it).
        result::release_in_drop(&self.ctx, || unsafe {
            cudarc::driver::result::event::destroy(event)
        });
    }
}

impl LastLaunch {
    /// Before a launch: makes the event (once), by the driver.
    pub(crate) fn prepare(&mut self, ctx: &Arc<CudaContext>) -> Result<()> {
        if self.event.is_none() {
            result::bind(ctx).op("cuCtxSetCurrent")?;
            let flags = cudarc::driver::sys::CUevent_flags::CU_EVENT_DISABLE_TIMING;
            let event = cudarc::driver::result::event::create(flags).op("cuEventCreate")?;
            self.event = Some(RawEvent {
                event,
                ctx: ctx.clone(),
            });
        }
        Ok(())
    }

    /// After a launch was queued on `stream`: records it, by the
    /// driver. If the record fails, the host waits for the stream instead;
    /// if that fails too, the exec's drop can no longer wait for it.
    pub(crate) fn launched(&mut self, stream: &CudaStream) -> Result<()> {
        let Some(event) = &self.event else {
            unreachable!("made by `prepare` before the launch")
        };
        self.deferred = false;
        let (recorded, waited) = record_or_wait(event, stream);
        self.unwaitable = waited.is_err();
        recorded.op("cuEventRecord")
    }

    /// After a launch was queued on the exec's own stream: recorded only
    /// if a later launch there waits through cudarc ([`LastLaunch::flush`]).
    /// Nothing else can make that stream capture (no caller gets it; the
    /// runtime's own waits there ask first), so until then the drop waits
    /// for the stream. Saves a driver call per launch (an event record,
    /// the cost of a bound slice's: BENCHMARKS.md).
    pub(crate) fn defer(&mut self) {
        self.deferred = true;
        self.unwaitable = false;
    }

    /// Before a wait through cudarc on the exec's own stream (`stream`, of
    /// the current context): records a deferred launch there, by the
    /// driver, or waits for it on the host (the stream is not capturing:
    /// only such a wait could have drawn it into a capture). Refused if
    /// neither can be done: the wait must not be made.
    pub(crate) fn flush(&mut self, stream: &Arc<CudaStream>) -> Result<()> {
        if !self.deferred {
            return Ok(());
        }
        self.prepare(stream.context())?;
        let Some(event) = &self.event else {
            unreachable!("made by `prepare` above")
        };
        record_or_wait(event, stream)
            .1
            .op("cuStreamSynchronize (the last launch, before a wait that may join a capture)")?;
        self.deferred = false;
        Ok(())
    }

    /// The exec's drop, when its stream (`last`, that of its last launch)
    /// cannot be waited for: waits on the host for its last launch (none
    /// made: nothing to wait for), in the relaxed capture mode; a deferred
    /// one through `last` itself (nothing could draw that stream into a
    /// capture: the drop found it capturing only if the context faulted,
    /// or could not be made current). False when that cannot be waited
    /// for either (its record was captured: a capture another thread began
    /// on a shared stream between the launch and the record, the window
    /// the crate docs leave open; or the context faulted: nothing runs).
    pub(crate) fn wait(&self, last: &CudaStream) -> bool {
        match &self.event {
            _ if self.deferred => result::with_relaxed_capture_mode(|| {
                result::bind(last.context()).is_ok() && result::synchronize(last).is_ok()
            }),
            None => true,
            Some(_) if self.unwaitable => false,
            Some(event) => result::with_relaxed_capture_mode(|| {
                result::bind(&event.ctx).is_ok()
                    // SAFETY: the event is live (owned), its context current.
                    && unsafe { cudarc::driver::result::event::synchronize(event.event) }.is_ok()
            }),
        }
    }
}

/// Records `stream`'s work so far in `event`, by the driver; if that
/// fails, waits for the work on the host (in the relaxed capture mode).
/// Returns the record's result, and whether the work is waited for one
/// way or the other (`Ok`) or neither could be done.
fn record_or_wait(
    event: &RawEvent,
    stream: &CudaStream,
) -> (
    std::result::Result<(), cudarc::driver::DriverError>,
    std::result::Result<(), cudarc::driver::DriverError>,
) {
    // SAFETY: the event and the stream are live, of the current context
    // (the caller's launch or checks bound it).
    let recorded =
        unsafe { cudarc::driver::result::event::record(event.event, stream.cu_stream()) };
    let waited = match recorded {
        Ok(()) => Ok(()),
        Err(_) => result::with_relaxed_capture_mode(|| result::synchronize(stream)),
    };
    (recorded, waited)
}
