//! Class 7: lifetimes the driver does not keep.
//!
//! The driver lets a launch outlive its stream handle and its exec handle
//! (`cuStreamDestroy` and `cuGraphExecDestroy` defer until the work is
//! done), but the memory the work touches is only borrowed by the exec: its
//! borrow ends when the exec is dropped. So an exec keeps its last launch
//! stream alive and its drop waits for the launch; a forgotten exec
//! (`mem::forget` is safe) leaves the ordering to cudarc's event tracking,
//! which must stay active for it.
//!
//! Most tests here use a context of their own with event tracking disabled,
//! so that nothing but the runtime orders the streams: a read on another
//! stream right after the exec is dropped races unless the drop waited.

use crate::common::{own_context, slow_fill_launched, sync};
use cudarc::driver::CudaContext;
use graph_runtime::kernel::KernelDef;
use graph_runtime::{cudarc, Graph, LaunchConfig, Node};
use std::sync::Arc;

const N: u32 = 1 << 20;
/// About 25 ms of spinning at the H200's clock: long enough to expose a race.
const SPIN: i64 = 50_000_000;

/// An own context in which cudarc does not order streams.
fn untracked_context() -> Arc<CudaContext> {
    let ctx = own_context();
    // SAFETY: the tests order their streams by hand (synchronize) or through
    // the exec's drop, which is what they check; no slice is freed while a
    // use of it on another stream may be pending.
    unsafe { ctx.disable_event_tracking() };
    ctx
}

/// Adds `steps` kernels after `first`, each adding 1 to `x`, in a chain.
fn add_steps<'a>(
    g: &mut Graph<'a>,
    add_one: &graph_runtime::Kernel<<kernels::AddOne as KernelDef>::Args>,
    x: graph_runtime::Buf<'a, f32>,
    first: Node,
    steps: usize,
) {
    let mut last = first;
    for i in 0..steps {
        last = g
            .add_kernel(
                &format!("step{i}"),
                add_one,
                LaunchConfig::for_elements(N, 256),
                (x, N),
                &[last],
            )
            .unwrap()
            .node();
    }
}

/// Attack: launch an exec (a slow fill of x with 7, then a chain of `STEPS`
/// kernels adding 1) on a stream made for it, drop that stream variable
/// right after the launch, drop the exec, and read x on another stream.
///
/// Must happen: the read sees the graph's full result, 7 + `STEPS`
/// everywhere: the exec kept the stream alive and its drop waited.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn an_exec_keeps_a_dropped_launch_stream_and_its_drop_waits() {
    const STEPS: usize = 200;
    let ctx = untracked_context();
    let home = ctx.new_stream().unwrap();
    let (slow, add_one) = (
        kernels::SlowFill::load(&ctx).unwrap(),
        kernels::AddOne::load(&ctx).unwrap(),
    );
    let mut x = home.alloc_zeros::<f32>(N as usize).unwrap();
    sync(&home);
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        let first = g
            .add_kernel(
                "slow_fill",
                &slow,
                LaunchConfig::new(132, 256),
                (xb, 7.0, N, SPIN),
                &[],
            )
            .unwrap()
            .node();
        add_steps(&mut g, &add_one, xb, first, STEPS);
        let mut exec = g.instantiate().unwrap();
        let launch_stream = ctx.new_stream().unwrap();
        exec.launch(&launch_stream).unwrap();
        drop(launch_stream);
        drop(g);
        drop(exec);
    }
    let read = home.clone_dtoh(&x).unwrap();
    let expected = 7.0 + STEPS as f32;
    assert!(
        read.iter().all(|v| *v == expected),
        "read {:?} before the graph finished",
        &read[..4]
    );
}

/// Attack: launch one exec 50 times, each on a fresh stream that is dropped
/// right after its launch, then drop the exec and read on another stream.
/// (Launches of one exec are ordered by CUDA, whatever the stream.) Under
/// compute-sanitizer (`CUDA_GRAPH_SANITIZE`) 5 times: racecheck had not
/// finished the 550 kernels of 50 launches after 100 s on the H200.
///
/// Must happen: the read sees the final value, `launches * STEPS`: the drop
/// waited for the last launch, which came after all the others.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_dropped_exec_waits_for_its_launches_on_dropped_streams() {
    let launches: usize = if std::env::var_os("CUDA_GRAPH_SANITIZE").is_some() {
        5
    } else {
        50
    };
    const STEPS: usize = 10;
    let ctx = untracked_context();
    let home = ctx.new_stream().unwrap();
    let (slow, add_one) = (
        kernels::SlowFill::load(&ctx).unwrap(),
        kernels::AddOne::load(&ctx).unwrap(),
    );
    let mut x = home.alloc_zeros::<f32>(N as usize).unwrap();
    let mut scratch = home.alloc_zeros::<f32>(256).unwrap();
    sync(&home);
    {
        let mut g = Graph::new(&ctx).unwrap();
        let (xb, sb) = (g.bind_mut(&mut x), g.bind_mut(&mut scratch));
        let first = g
            .add_kernel(
                "slow",
                &slow,
                LaunchConfig::new(1, 256),
                (sb, 1.0, 256, SPIN / 10),
                &[],
            )
            .unwrap()
            .node();
        add_steps(&mut g, &add_one, xb, first, STEPS);
        let mut exec = g.instantiate().unwrap();
        for _ in 0..launches {
            let stream = ctx.new_stream().unwrap();
            exec.launch(&stream).unwrap();
        }
    }
    let read = home.clone_dtoh(&x).unwrap();
    let expected = (launches * STEPS) as f32;
    assert!(
        read.iter().all(|v| *v == expected),
        "read {:?}, expected {expected}",
        &read[..4]
    );
}

/// Attack: with cudarc's event tracking on, allocate x on the default stream
/// (which cudarc does not count), launch an exec on the only stream made
/// with `new_stream`, drop that stream variable, `mem::forget` the exec (so
/// its drop never waits), drop x and allocate a new buffer z of 3s on the
/// default stream (it may reuse x's memory).
///
/// Must happen: z reads back all 3: cudarc still ordered x's free after the
/// launch. (Had the exec not kept its stream, cudarc would have left
/// multi-stream mode when the variable was dropped, and freed x at once.)
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_forgotten_exec_keeps_cudarc_tracking_its_launch() {
    let ctx = own_context();
    let default = ctx.default_stream();
    let mut x = default.alloc_zeros::<f32>(N as usize).unwrap();
    sync(&default);
    {
        let (exec, stream) = slow_fill_launched(&ctx, &mut x, SPIN);
        drop(stream);
        std::mem::forget(exec);
    }
    drop(x);
    let z = default.clone_htod(&vec![3.0f32; N as usize]).unwrap();
    ctx.synchronize().unwrap();
    assert!(
        default.clone_dtoh(&z).unwrap().iter().all(|v| *v == 3.0),
        "the forgotten launch wrote freed memory"
    );
}

/// Attack (still open; ignored until the runtime handles it): launch
/// an exec of context A on a stream of context B (same device), `mem::forget` the exec, drop the bound buffer and allocate a
/// new one of 3s on A. cudarc's events for A's slice cannot be recorded on
/// B's stream (and B, with one stream, does not track at all), so nothing
/// would order the free after the launch.
///
/// Seen on driver 580.x (H200): the launch returns `Ok`, and the new buffer
/// reads back 7s: the graph wrote freed (and reused) memory.
///
/// Must happen: the launch is refused (the stream is not of the exec's
/// context), or, if it runs, the new buffer reads back all 3 (the free
/// waited for it).
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_launch_on_another_contexts_stream_is_refused_or_tracked() {
    let a = own_context();
    let b = own_context();
    let slow = kernels::SlowFill::load(&a).unwrap();
    let home = a.new_stream().unwrap();
    let mut x = home.alloc_zeros::<f32>(N as usize).unwrap();
    sync(&home);
    let foreign = b.default_stream();
    let launched;
    {
        let mut g = Graph::new(&a).unwrap();
        let xb = g.bind_mut(&mut x);
        g.add_kernel(
            "slow_fill",
            &slow,
            LaunchConfig::new(132, 256),
            (xb, 7.0, N, SPIN),
            &[],
        )
        .unwrap();
        let mut exec = g.instantiate().unwrap();
        launched = exec.launch(&foreign);
        eprintln!("launch on another context's stream: {launched:?}");
        std::mem::forget(exec);
    }
    drop(x);
    let z = home.clone_htod(&vec![3.0f32; N as usize]).unwrap();
    b.synchronize().unwrap();
    a.synchronize().unwrap();
    let read = home.clone_dtoh(&z).unwrap();
    assert!(
        launched.is_err() || read.iter().all(|v| *v == 3.0),
        "the forgotten launch on another context's stream wrote freed memory"
    );
    let _ = a.check_err();
}

/// Attack (third review): launch a slow exec (a spin, then `STEPS` kernels
/// adding 1 to x), store an error in the context with cudarc's safe
/// `record_err` (as any failed cudarc drop on any thread does), drop the
/// exec, and read x on another stream. cudarc's `CudaStream::synchronize`
/// returns such a stored error instead of waiting.
///
/// Must happen: the read sees `STEPS` everywhere (the drop waited with the
/// driver itself), and the stored error is still there for cudarc to
/// report.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_stored_error_does_not_stop_a_dropped_exec_from_waiting() {
    const STEPS: usize = 10;
    let ctx = untracked_context();
    let (home, other) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let (slow, add_one) = (
        kernels::SlowFill::load(&ctx).unwrap(),
        kernels::AddOne::load(&ctx).unwrap(),
    );
    let mut x = home.alloc_zeros::<f32>(N as usize).unwrap();
    let mut scratch = home.alloc_zeros::<f32>(256).unwrap();
    sync(&home);
    {
        let mut g = Graph::new(&ctx).unwrap();
        let (xb, sb) = (g.bind_mut(&mut x), g.bind_mut(&mut scratch));
        let first = g
            .add_kernel(
                "slow",
                &slow,
                LaunchConfig::new(1, 256),
                (sb, 1.0, 256, SPIN),
                &[],
            )
            .unwrap()
            .node();
        add_steps(&mut g, &add_one, xb, first, STEPS);
        let mut exec = g.instantiate().unwrap();
        exec.launch(&other).unwrap();
        ctx.record_err::<()>(Err(cudarc::driver::DriverError(
            cudarc::driver::sys::CUresult::CUDA_ERROR_INVALID_VALUE,
        )));
    }
    let stored = ctx.check_err();
    assert!(stored.is_err(), "the stored error was lost");
    let read = home.clone_dtoh(&x).unwrap();
    assert!(
        read.iter().all(|v| *v == STEPS as f32),
        "read {:?}: the drop did not wait",
        &read[..4]
    );
}
