//! The launch protocol: what an exec's launch, drop, synchronize, update
//! and device handle check, wait for, record and release, in order, and
//! why. Every path that launches or retires an exec goes through here:
//!
//! ```text
//! ordering::check_stream(ctx, stream, "launch")?;        // 1 (own: OwnStream::check)
//! let guard = ordering::prepare((root, &sets), &escapes, (stream, own), &mut last)?; // 2-5
//! let launched = unsafe { result::launch(raw, stream) };   // 6
//! guard.commit(launched.is_ok())?;                         // 7
//! last.launched(stream)?;  // or, on the exec's own stream, last.defer()
//! ```
//!
//! 1. **The stream.** The per-thread default stream is refused (its
//!    handle names another stream on every thread, and an exec is `Send`:
//!    its drop could not wait for the launch); so is a stream of another
//!    context (cudarc's events live in the exec's context); the context is
//!    made current; a capturing stream is refused (the launch would be
//!    recorded into the capture, not run, and nothing could wait for it).
//!    The exec's own stream is asked only after a wait that could have
//!    drawn it into a capture ([`OwnStream`]).
//! 2. **Lock the resource sets** the exec tracks (its graph's, its child
//!    graphs', those of the execs its kernels launch from the device),
//!    in address order ([`ranks`](crate::ranks): two launches that share
//!    sets cannot wait for each other). A set lent out to a `BoundMut` is
//!    refused ([`GraphError::BufferLent`]): a view of its slice is in use.
//! 3. **Lock the allocations** that outlive launches (`escape`), in
//!    address order, and refuse a launch out of turn: making one while the
//!    last launch's is taken and live, using or freeing one freed since it
//!    was made, freeing one the caller still holds
//!    ([`GraphError::AllocationRefused`]). The last launch's allocation
//!    that nobody took is freed now, on this stream, and that free is
//!    recorded.
//! 4. **Wait.** The stream waits for each bound slice's pending cudarc
//!    work (cudarc's own waits, through its guards; skipped for a set
//!    whose last launch was on this stream and whose slices nothing else
//!    reached since), for the last use of each set's owned buffers
//!    (`owned`: one event, recorded now on that use's stream, and only if
//!    it is another stream; refused if that stream is capturing since) and
//!    for the last operation on each allocation it uses or frees (the
//!    allocation's event, by the driver directly).
//! 5. **No stored error, no capture joined.** cudarc's waits skip
//!    themselves when an error is stored in the context (they return it
//!    and store it again): one stored now means a wait may not have been
//!    made, so nothing is launched and that error is returned. And a wait
//!    through cudarc for a slice that another thread last used in a
//!    capture (on its own stream, still open) draws this stream into that
//!    capture: after such waits the stream is asked again, and a
//!    capturing one is refused ([`StreamRefusal::JoinedCapture`]), since
//!    the launch would be recorded into that thread's graph.
//! 6. **Launch** (the caller, with its `SAFETY` argument).
//! 7. **Commit.** If the launch was queued: record it in every tracked
//!    slice's cudarc event (by the driver directly: cudarc's record skips
//!    itself when an error is stored, and a skipped record would let a
//!    later use or free of the slice overtake the launch; also while
//!    cudarc tracks nothing, since a stream made later turns its tracking
//!    on; a failed record is waited for on the host) and in the exec's own
//!    event (by the caller: [`LastLaunch`]; on the exec's own stream, only
//!    before a later launch's first wait through cudarc there), note this
//!    stream as each set's last (and as its owned buffers' last use: no
//!    record; an exec's own stream is noted as one no caller gets, where
//!    a loan copies directly), give each allocation its new state
//!    (made, freed) and record the launch in its event. A launch not
//!    queued records nothing (a record then could cover a skipped wait).
//!    The locks are released when the guard goes, committed or not.
//!
//! The exec keeps the stream of its last queued launch ([`wait`] waits for
//! it): its drop ([`finish`]) frees what that launch left live and nobody
//! took, then waits for it, because the exec's borrows end with the drop.
//! A stream that began a capture since cannot be waited for: the drop
//! then waits on the host for the exec's own event of its last launch
//! ([`LastLaunch`]: the exec's borrows end with the drop, and cudarc orders
//! its slices' frees only through events a stored error disarms), and leaks
//! everything else the launch may use, as `mem::forget` of the exec would.
//! The drop makes the exec's context current first (it may run on a
//! thread where another is), and waits in the relaxed capture mode (a
//! global or thread-local capture elsewhere would refuse its host waits).
//! A whole-graph update holds both graphs' guards while the driver reads
//! them ([`update_guards`]: in address order), and keeps the resources it
//! replaced ([`retire`]) until the stream is seen done (their kernels'
//! modules may still run).

use crate::buffer::{LockedSet, ResourceSet, Resources, SharedResources, UseEvent};
use crate::error::{DriverResultExt, GraphError, Result, StreamRefusal};
use crate::escape::{EscapeState, Role};
use crate::graph::RawGraph;
use crate::ranks::Ranked;
use crate::result;
use cudarc::driver::{CudaContext, CudaStream};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};

mod escapes;
mod last_launch;
mod sets;

#[cfg(doc)]
pub(crate) use last_launch::LastLaunch;
pub(crate) use last_launch::{Launches, OwnStream};

pub(crate) use sets::tracked_sets;

/// Step 1: refuses a stream `operation` cannot run on (the per-thread
/// default stream, another context's, a capturing one) and makes the
/// context current.
pub(crate) fn check_stream(
    ctx: &Arc<CudaContext>,
    stream: &CudaStream,
    operation: &'static str,
) -> Result<()> {
    if result::is_per_thread(stream) {
        return Err(GraphError::StreamRefused {
            operation,
            stream: StreamRefusal::PerThreadDefault,
        });
    }
    // The exec's context value itself: two values of one context count
    // their streams apart, so cudarc's tracking could be on for the bound
    // slices and off for the stream (see `Graph::bind`).
    if !Arc::ptr_eq(stream.context(), ctx) {
        return Err(GraphError::foreign(
            crate::error::Foreign::Stream,
            None,
            operation,
        ));
    }
    ctx.bind_to_thread().op("cuCtxSetCurrent")?;
    not_capturing(stream, operation, StreamRefusal::Capturing)
}

/// Refuses a capturing stream (as `refusal`): it records work instead of
/// running it.
pub(super) fn not_capturing(
    stream: &CudaStream,
    operation: &'static str,
    refusal: StreamRefusal,
) -> Result<()> {
    // SAFETY: the stream is live (borrowed).
    match unsafe { result::is_capturing(stream.cu_stream()) } {
        Ok(false) => Ok(()),
        Ok(true) => Err(GraphError::StreamRefused {
            operation,
            stream: refusal,
        }),
        Err(e) => Err(GraphError::driver("cuStreamIsCapturing", e.0, None)),
    }
}

/// A launch prepared on a stream: its sets and allocations locked, checked
/// and waited for (steps 2 to 5). [`LaunchGuard::commit`] records the
/// launch; dropping it uncommitted records nothing.
pub(crate) struct LaunchGuard<'g, 'a> {
    stream: &'g Arc<CudaStream>,
    /// `stream` is one no caller gets (an exec's own): whether it is known
    /// not to capture ([`OwnStream`]).
    own: Option<&'g Arc<AtomicBool>>,
    managing: bool,
    /// The exec's own set, locked without a box (most launches track no
    /// other: then `others` allocates nothing).
    root: Option<Ranked<MutexGuard<'g, Resources<'a>>>>,
    /// The other sets (child graphs', device-launched execs'), boxed: each
    /// is borrowed for a lifetime of its own.
    others: Vec<Box<dyn LockedSet + 'g>>,
    /// The exec's room for them, kept between launches (no allocation per
    /// launch): emptied here, drained by `commit`.
    records: &'g mut Vec<UseEvent>,
    escapes: escapes::Locked<'g>,
}

impl<'g, 'a: 'g> LaunchGuard<'g, 'a> {
    /// Every locked set, the exec's own first.
    fn sets(&mut self) -> impl Iterator<Item = &mut (dyn LockedSet + 'g)> + use<'_, 'g, 'a> {
        locked_sets(&mut self.root, &mut self.others)
    }
}

/// A guard's locked sets (`root`, then `others`), borrowed apart from
/// its other fields.
fn locked_sets<'s, 'g, 'a: 'g>(
    root: &'s mut Option<Ranked<MutexGuard<'g, Resources<'a>>>>,
    others: &'s mut [Box<dyn LockedSet + 'g>],
) -> impl Iterator<Item = &'s mut (dyn LockedSet + 'g)> + use<'s, 'g, 'a> {
    let root = root.iter_mut().map(|set| set as &mut dyn LockedSet);
    root.chain(
        others
            .iter_mut()
            .map(|set| &mut **set as &mut dyn LockedSet),
    )
}

/// Steps 2 to 5 for a launch on `stream` (`own`: a stream no caller gets,
/// an exec's own, and its flag: [`OwnStream`]) that tracks `sets` (in lock order:
/// [`tracked_sets`]; `root`, the exec's own, among them) and makes, uses
/// or frees `escapes`. The context is current (step 1). On a private
/// stream, the exec's last launch (maybe not recorded: see
/// [`LastLaunch::defer`]) is recorded before the first wait through
/// cudarc, the only kind that can draw that stream into a capture.
#[inline] // one caller, on the launch loop's path
pub(crate) fn prepare<'g, 'a: 'g>(
    (root, sets): (&'g Mutex<Resources<'a>>, &'g [Arc<dyn ResourceSet + 'a>]),
    escapes: &'g [(Arc<EscapeState>, Role)],
    (stream, own): (&'g Arc<CudaStream>, Option<&'g Arc<AtomicBool>>),
    launches: &'g mut Launches,
) -> Result<LaunchGuard<'g, 'a>> {
    let Launches { last, records } = launches;
    records.clear();
    let lent = || GraphError::BufferLent {
        operation: "launch",
    };
    let root_key = root.key();
    let (mut root_locked, mut others) = (None, Vec::new());
    for set in sets {
        if set.key() == root_key {
            let set = crate::buffer::lock(root);
            if set.lent() {
                return Err(lent());
            }
            root_locked = Some(set);
        } else {
            let set = set.lock_set();
            if set.lent() {
                return Err(lent());
            }
            others.push(set);
        }
    }
    // `tracked_sets` starts from the exec's own set: it is always there.
    debug_assert!(root_locked.is_some(), "the exec's own set is not tracked");
    let escapes = escapes::prepare(escapes, stream)?;
    let managing = stream.context().is_managing_stream_synchronization();
    let mut guard = LaunchGuard {
        stream,
        own,
        managing,
        root: root_locked,
        others,
        records,
        escapes,
    };
    let mut waited = false;
    let mut before_join = || match own {
        Some(_) => last.flush(stream),
        None => Ok(()),
    };
    let LaunchGuard {
        root,
        others,
        records,
        ..
    } = &mut guard;
    for set in locked_sets(root, others) {
        waited |= set.acquire(stream, managing, records, &mut before_join)?;
    }
    stream.context().check_err().op("cuGraphLaunch")?;
    // cudarc's waits for a slice whose last use another thread recorded in
    // a capture (its stream's, begun before and still open) draw this
    // stream into it, and the launch would be recorded there, not run (or
    // refused by the driver). Nothing undoes the join: the stream captures
    // until that capture ends.
    if waited {
        not_capturing(stream, "launch", StreamRefusal::JoinedCapture)?;
    }
    Ok(guard)
}

impl LaunchGuard<'_, '_> {
    /// Step 7: records a queued launch (`queued`), then releases the
    /// locks. Returns the first failed record of an allocation's event.
    #[inline] // one caller, on the launch loop's path
    pub(crate) fn commit(mut self, queued: bool) -> Result<()> {
        if !queued {
            return Ok(());
        }
        // A failed record is waited for on the host (`UseEvent::record`):
        // the launch is done before cudarc work that waits for the event's
        // older record; the first failure is returned after the rest.
        let mut failed = None;
        for event in self.records.drain(..) {
            if let Err(e) = event.record(self.stream) {
                failed.get_or_insert(e);
            }
        }
        let (stream, managing, own) = (self.stream, self.managing, self.own);
        for set in self.sets() {
            set.launched_on(stream, managing, own);
        }
        let escapes = self.escapes.launched(self.stream);
        match failed {
            Some(e) => Err(e).op("cuEventRecord"),
            None => escapes,
        }
    }
}

/// Waits for the last launch queued on `last` (by the driver directly:
/// cudarc's synchronize returns an error another call stored instead).
pub(crate) fn wait(last: Option<&Arc<CudaStream>>) -> Result<()> {
    match last {
        Some(stream) => result::synchronize(stream).op("cuStreamSynchronize"),
        None => Ok(()),
    }
}

/// How an exec's drop ended.
#[must_use]
pub(crate) enum Finished {
    /// Its last launch is done: its borrows may end.
    Done,
    /// Its stream began a capture since: nothing can tell that the launch
    /// is done, so the exec must leak what it may use.
    StillRunning,
}

/// An exec's drop: frees the allocations its last launch on `stream` left
/// live (`leftover`: those of alloc nodes nothing frees; each one an
/// `escapes` state makes is freed only if nobody took it), then waits for
/// that launch. Failures cannot be returned from a drop: they are kept in
/// the context, as cudarc keeps its own.
pub(crate) fn finish(
    ctx: &CudaContext,
    stream: &CudaStream,
    leftover: impl Iterator<Item = u64>,
    escapes: &[(Arc<EscapeState>, Role)],
) -> Finished {
    // The exec may be dropped on a thread where another context is
    // current: the frees and the wait below are for this one. A context
    // that cannot be made current leaves nothing to wait with.
    if result::bind(ctx).is_err() {
        return Finished::StillRunning;
    }
    // A stream that began a capture after the last launch refuses the wait
    // below (and would record our frees, not run them).
    // SAFETY: the stream is live (borrowed).
    if unsafe { result::is_capturing(stream.cu_stream()) }.unwrap_or(true) {
        return Finished::StillRunning;
    }
    for ptr in leftover {
        let made = escapes
            .iter()
            .find(|(state, role)| *role == Role::Make && state.ptr == ptr);
        let freed = match made {
            // Freed here only if live and not taken (an `Escaped` or a
            // graph holding it frees it).
            Some((state, _)) => state.free(stream, true),
            // SAFETY: the last launch allocated `ptr` on this stream's
            // timeline (auto-freed at the next launch, which will not
            // come); it is freed once, after it.
            None => unsafe { cudarc::driver::result::free_async(ptr, stream.cu_stream()) },
        };
        ctx.record_err(freed);
    }
    // A fault leaves nothing to wait for (the context runs nothing more);
    // it stays recorded in the context for cudarc to report. A refusal
    // because of a capture (one began since the check above) says nothing
    // of the work.
    match result::synchronize(stream) {
        Ok(()) => Finished::Done,
        Err(e) if result::refused_by_capture(e.0) => Finished::StillRunning,
        Err(e) => {
            ctx.record_err(Err::<(), _>(e));
            Finished::Done
        }
    }
}

/// How many replaced resource sets an exec keeps before it asks whether its
/// stream is done. A query per update (`cuStreamQuery`) was the update
/// path's one new driver call when the rebuild + whole-graph update +
/// launch loop went from 1.06x to 1.18x C++ (BENCHMARKS.md, run 24; with
/// this bound, run 25: 1.12x for one buffer): asking once eight sets are
/// kept keeps their kernels' modules and other graphs' bound allocations a
/// little longer.
const RETIRED_BEFORE_QUERY: usize = 8;

/// Keeps `replaced` in `retired` while a launch on `last_stream` may still
/// use it; drops those retired before once that stream is seen done (asked
/// when `RETIRED_BEFORE_QUERY` sets are kept; `Exec::synchronize` and the
/// exec's drop wait anyway).
pub(crate) fn retire<'a>(
    retired: &mut Vec<SharedResources<'a>>,
    last_stream: Option<&Arc<CudaStream>>,
    replaced: SharedResources<'a>,
) {
    let Some(stream) = last_stream else {
        return;
    };
    if retired.len() >= RETIRED_BEFORE_QUERY {
        // SAFETY: the stream is live (held by the exec).
        if unsafe { result::stream_done(stream.cu_stream()) }.unwrap_or(false) {
            retired.clear();
        }
    }
    if !retired.iter().any(|r| Arc::ptr_eq(r, &replaced)) {
        retired.push(replaced);
    }
}

/// A graph's guard, held for an update.
pub(crate) type GraphGuard<'g> = Ranked<MutexGuard<'g, ()>>;

/// The guards an update holds: its exec's graph's and that of the graph it
/// is updated from (one guard if they are one graph), two in address order:
/// two threads updating two execs from each other's graphs must not
/// deadlock.
pub(crate) fn update_guards<'g>(
    mine: &'g RawGraph,
    theirs: &'g RawGraph,
) -> (GraphGuard<'g>, Option<GraphGuard<'g>>) {
    if std::ptr::eq(mine, theirs) {
        (mine.lock(), None)
    } else if (mine as *const RawGraph) < (theirs as *const RawGraph) {
        let first = mine.lock();
        (first, Some(theirs.lock()))
    } else {
        let first = theirs.lock();
        (mine.lock(), Some(first))
    }
}
