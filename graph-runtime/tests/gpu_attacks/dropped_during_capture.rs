//! Class 11 (continued): an exec dropped while the stream of its last
//! launch captures. The drop cannot wait for that stream (a capturing
//! stream refuses it), yet the exec's borrows (bound slices, events, host
//! memory) end with it: it waits for its last launch on the host, through
//! an event of its own, and leaks everything it owns.

use crate::common::{own_context, slow_fill_launched, sync};
use graph_runtime::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use graph_runtime::kernel::KernelDef;
use graph_runtime::{Graph, LaunchConfig};

const N: u32 = 1 << 20;
/// About 25 ms of spinning at the H200's clock: long enough to expose a race.
const SPIN: i64 = 50_000_000;
const RELAXED: CUstreamCaptureMode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;

/// Attack: with cudarc's tracking on, launch a slow fill of x (7s) on the
/// only stream made with `new_stream`, begin a capture on that stream, drop
/// the exec (its wait is refused), end the capture, drop the stream and the
/// graph (cudarc stops tracking once no such stream is left), drop x and
/// allocate z of 3s on the default stream (it may reuse x's memory).
///
/// Must happen: z reads back all 3: the drop that could not wait for its
/// stream waited for the launch's own event (and left the launch's
/// stream, and so cudarc's tracking, alive, as a forgotten exec does), so
/// x's free follows the fill.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn an_exec_dropped_while_its_stream_captures_does_not_release_its_launch() {
    exec_dropped_during_a_capture(false);
}

/// Attack: as above, with an error stored in the context (the safe
/// `record_err`) when x is dropped: cudarc's drop of x then skips its wait
/// for the fill's event (its wait returns the stored error instead).
///
/// Must happen: z reads back all 3: the exec's drop waited for the launch
/// on the host, through its own event, before x's borrow ended.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn an_exec_dropped_while_its_stream_captures_outlasts_a_stored_error() {
    exec_dropped_during_a_capture(true);
}

/// Attack: an exec whose graph records a borrowed event after a slow fill
/// of a graph-owned buffer (no cudarc slice at all), launched on a stream
/// that then begins a capture; the exec is dropped during the capture (its
/// stream wait is refused), and its borrow of the event ends with it, so
/// the caller may destroy the event while the record node is pending.
///
/// Must happen: the drop waited for the launch on the host (the exec's own
/// event): right after it, the borrowed event is complete.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn an_exec_dropped_during_a_capture_waits_before_its_event_borrow_ends() {
    event_borrow_outlives_the_launch(RELAXED);
}

fn event_borrow_outlives_the_launch(mode: CUstreamCaptureMode) {
    let ctx = own_context();
    let slow = kernels::SlowFill::load(&ctx).unwrap();
    let recorded = ctx.new_event(None).unwrap();
    let stream = ctx.new_stream().unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let x = g.add_buffer::<f32>(N as usize).unwrap();
        let fill = g
            .add_kernel(
                "slow_fill",
                &slow,
                LaunchConfig::new(132, 256),
                (x, 7.0, N, SPIN),
                &[],
            )
            .unwrap();
        g.add_event_record("done", &recorded, &[fill.node()])
            .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        stream.begin_capture(mode).unwrap();
        drop(exec);
        // The query itself in the relaxed mode (a global capture of this
        // thread's refuses it otherwise).
        let complete =
            graph_runtime::result::with_relaxed_capture_mode(|| recorded.try_is_complete());
        let _ = stream.end_capture(CUgraphInstantiate_flags(0));
        assert_eq!(
            complete.map_err(|e| e.0),
            Ok(true),
            "the exec's drop returned before its launch recorded the borrowed event"
        );
    }
    sync(&stream);
    drop(recorded);
}

fn exec_dropped_during_a_capture(stored_error: bool) {
    use graph_runtime::cudarc::driver::{sys::CUresult, DriverError};
    let ctx = own_context();
    let default = ctx.default_stream();
    let mut x = default.alloc_zeros::<f32>(N as usize).unwrap();
    sync(&default);
    {
        let (exec, stream) = slow_fill_launched(&ctx, &mut x, SPIN);
        stream.begin_capture(RELAXED).unwrap();
        drop(exec);
        // Nothing was captured; either outcome of ending it is fine here.
        let _ = stream.end_capture(CUgraphInstantiate_flags(0));
    }
    if stored_error {
        ctx.record_err::<()>(Err(DriverError(CUresult::CUDA_ERROR_UNKNOWN)));
    }
    drop(x);
    // Taken back (cudarc's drop of x stores it again after its skipped
    // wait), so that the reads below are not refused with it.
    let _ = ctx.check_err();
    let z = default.clone_htod(&vec![3.0f32; N as usize]).unwrap();
    ctx.synchronize().unwrap();
    assert!(
        default.clone_dtoh(&z).unwrap().iter().all(|v| *v == 3.0),
        "the launch wrote freed memory after its exec was dropped"
    );
}

/// Tests that run each in a process of their own (run.sh): a global-mode
/// capture refuses "potentially unsafe" calls (allocations, waits) to
/// every other thread of the process while it lasts, so another test's
/// `alloc_zeros` beside it failed with `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`
/// (the H100, 2026-12-05).
mod alone {
    use super::*;

    /// Attack: as above, with a global-mode capture: this thread may then make
    /// no "potentially unsafe" call (host waits among them), so the drop's
    /// waits would be refused too.
    ///
    /// Must happen: as above (the drop waits in the relaxed mode).
    #[test]
    #[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
    fn an_exec_dropped_during_a_global_capture_still_waits() {
        event_borrow_outlives_the_launch(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL);
    }
}
