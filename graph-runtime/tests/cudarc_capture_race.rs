//! A hole in cudarc, reproduced without graph-runtime: one thread begins and
//! ends captures on a stream (`CudaStream::begin_capture` is safe) while
//! another makes cudarc's own safe calls on the same stream. A call that
//! lands inside a capture is recorded instead of run: an allocation then
//! hands out an address the capture owns, and the calls after it (a memset,
//! a copy, the free when the slice drops) use that address outside the
//! capture. On the H200 (driver 580.x, cudarc 0.19) the process dies of
//! SIGSEGV within seconds. Every user of graph-runtime shares a stream
//! through cudarc, so the crate's Safety docs list this among what is not
//! closed, and say what not to do: begin captures on a stream that another
//! thread uses.
//!
//! Kept out of the GPU runs (`tests/gpu*`): it kills the test process. Run
//! it alone on a GPU:
//! `cargo test -p graph-runtime --test cudarc_capture_race -- --ignored`.

use graph_runtime::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use graph_runtime::cudarc::driver::CudaContext;
use std::sync::atomic::{AtomicBool, Ordering};

/// Captures begun and ended by the capturing thread.
const CAPTURES: usize = 10_000;
const LEN: usize = 1024;

/// Must happen (and does not, in cudarc 0.19): each call on the shared
/// stream either does its work or returns an error; every copy that
/// succeeds reads back the zeros the memset wrote; the process survives.
#[test]
#[ignore = "reproduces a cudarc hole that kills the process; run alone, see the file's docs"]
fn cudarc_calls_on_a_stream_another_thread_captures() {
    // A context of its own: the primary one is shared with other tests.
    let ctx = CudaContext::new_non_primary(0, 0).expect("a CUDA GPU");
    let stream = ctx.new_stream().unwrap();
    let done = AtomicBool::new(false);
    let mut copies = 0usize;
    std::thread::scope(|s| {
        s.spawn(|| {
            ctx.bind_to_thread().unwrap();
            for _ in 0..CAPTURES {
                let relaxed = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
                if stream.begin_capture(relaxed).is_ok() {
                    let _ = stream.end_capture(CUgraphInstantiate_flags(0));
                }
            }
            done.store(true, Ordering::Release);
        });
        while !done.load(Ordering::Acquire) {
            let Ok(mut x) = stream.alloc_zeros::<f32>(LEN) else {
                continue;
            };
            if stream.memset_zeros(&mut x).is_err() {
                continue;
            }
            if let Ok(host) = stream.clone_dtoh(&x) {
                assert!(host.iter().all(|v| *v == 0.0), "a copy read other data");
                copies += 1;
            }
        }
    });
    println!("{copies} copies read back zeros over {CAPTURES} captures");
}
