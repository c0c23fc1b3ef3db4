//! cudarc's per-slice event tracking across streams: a graph launch waits
//! for pending cudarc work on its slices and is recorded as their latest use.

use graph_runtime::kernel::KernelDef;

use crate::common::{own_context, slow_fill_on};
use graph_runtime::{Graph, LaunchConfig};

const N: u32 = 1 << 20;
/// About 25 ms of spinning at the H200's clock: long enough to expose a race.
const SPIN: i64 = 50_000_000;

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_graph_write_is_seen_by_a_read_on_another_stream() {
    let ctx = own_context();
    let (a, b) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    assert!(ctx.is_managing_stream_synchronization());
    let slow = kernels::SlowFill::load(&ctx).unwrap();
    let mut y = a.alloc_zeros::<f32>(N as usize).unwrap();
    a.synchronize().unwrap();
    {
        let (g, _, _) = slow_fill_graph(&ctx, &slow, &mut y, 7.0);
        let mut exec = g.instantiate().unwrap();
        exec.launch(&a).unwrap();
    }
    // Read right away on stream b: cudarc makes b wait for the graph.
    let read = b.clone_dtoh(&y).unwrap();
    assert!(
        read.iter().all(|v| *v == 7.0),
        "stream b read {:?} before the graph finished",
        &read[..4]
    );
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_slice_dropped_after_a_launch_is_not_freed_under_the_graph() {
    let ctx = own_context();
    let (a, b) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let slow = kernels::SlowFill::load(&ctx).unwrap();
    let mut y = b.alloc_zeros::<f32>(N as usize).unwrap();
    b.synchronize().unwrap();
    {
        let (g, _, _) = slow_fill_graph(&ctx, &slow, &mut y, 7.0);
        let mut exec = g.instantiate().unwrap();
        exec.launch(&a).unwrap();
    }
    // cudarc frees `y` on stream b once its recorded uses (the launch) are done.
    drop(y);
    // A new allocation on b may reuse y's memory; if y were freed while the
    // graph still ran, the graph's late writes of 7.0 would land in it.
    let z = b.clone_htod(&vec![3.0f32; N as usize]).unwrap();
    a.synchronize().unwrap();
    b.synchronize().unwrap();
    let read = b.clone_dtoh(&z).unwrap();
    assert!(
        read.iter().all(|v| *v == 3.0),
        "freed memory was written by the graph"
    );
}

/// Control for the first test: a raw `cuGraphLaunch` that bypasses the
/// runtime's tracking lets stream b read before the graph has written, so
/// that test would catch a missing wait. Racy by nature, so it runs only
/// with CUDA_GRAPH_RUN_CONTROLS=1 (and `--include-ignored`), to confirm the
/// tests are sensitive.
#[test]
#[ignore = "a control, racy by nature: CUDA_GRAPH_RUN_CONTROLS=1 cargo test -- --include-ignored"]
fn control_raw_launch_without_tracking_races() {
    if std::env::var("CUDA_GRAPH_RUN_CONTROLS").is_err() {
        return;
    }
    let ctx = own_context();
    let (a, b) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let slow = kernels::SlowFill::load(&ctx).unwrap();
    let mut y = a.alloc_zeros::<f32>(N as usize).unwrap();
    a.synchronize().unwrap();
    let (g, yb, _) = slow_fill_graph(&ctx, &slow, &mut y, 7.0);
    let exec = g.instantiate().unwrap();
    // SAFETY: y outlives the launch (synchronized below before drops).
    unsafe { graph_runtime::result::launch(exec.cu_graph_exec(), a.cu_stream()) }.unwrap();
    let mut read = vec![0.0f32; N as usize];
    // SAFETY: reading device memory into a host buffer of the same size.
    unsafe {
        graph_runtime::cudarc::driver::result::memcpy_dtoh_async(
            &mut read,
            yb.device_ptr(),
            b.cu_stream(),
        )
    }
    .unwrap();
    b.synchronize().unwrap();
    a.synchronize().unwrap();
    assert!(
        read.iter().any(|v| *v != 7.0),
        "expected the untracked read to race"
    );
}

/// `driver::context` hands out one `Arc` per device while a clone lives, so
/// cudarc's stream count (and its synchronize on the first stream) is
/// shared; once every clone is gone, the next call opens it again.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn the_primary_context_is_one_arc_while_it_lives() {
    let first = crate::common::gpu();
    let second = graph_runtime::driver::context(0).unwrap();
    assert!(std::sync::Arc::ptr_eq(&first, &second));
    let stream = second.new_stream().unwrap();
    let x = stream.clone_htod(&[1.0f32, 2.0]).unwrap();
    assert_eq!(stream.clone_dtoh(&x).unwrap(), vec![1.0, 2.0]);
}

/// A graph of one slow fill of `y` with `value`, and its node.
fn slow_fill_graph<'a>(
    ctx: &std::sync::Arc<graph_runtime::cudarc::driver::CudaContext>,
    slow: &'a graph_runtime::Kernel<<kernels::SlowFill as KernelDef>::Args>,
    y: &'a mut graph_runtime::cudarc::driver::CudaSlice<f32>,
    value: f32,
) -> (
    Graph<'a>,
    graph_runtime::Buf<'a, f32>,
    graph_runtime::KernelNode<<kernels::SlowFill as KernelDef>::Args>,
) {
    let mut g = Graph::new(ctx).unwrap();
    let yb = g.bind_mut(y);
    let node = g
        .add_kernel(
            "slow_fill",
            slow,
            LaunchConfig::new(132, 256),
            (yb, value, N, SPIN),
            &[],
        )
        .unwrap();
    (g, yb, node)
}

/// A launch that follows the exec's last one on the same stream skips
/// cudarc's waits and only records its use: a read on another stream still
/// waits for it (not only for the launch before).
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_second_launch_on_one_stream_is_still_waited_for() {
    let ctx = own_context();
    let (a, b) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let slow = kernels::SlowFill::load(&ctx).unwrap();
    let mut y = a.alloc_zeros::<f32>(N as usize).unwrap();
    a.synchronize().unwrap();
    let (g, yb, node) = slow_fill_graph(&ctx, &slow, &mut y, 1.0);
    let mut exec = g.instantiate().unwrap();
    exec.launch(&a).unwrap();
    exec.set_kernel_args(&node, (yb, 2.0, N, SPIN)).unwrap();
    exec.launch(&a).unwrap();
    let read = b.clone_dtoh(&exec.bound_mut(yb).unwrap().view()).unwrap();
    assert!(
        read.iter().all(|v| *v == 2.0),
        "stream b read {:?} before the second launch finished",
        &read[..4]
    );
}

/// The same with the exec forgotten (its drop would wait): cudarc's free
/// of the slice waits for the second launch, whose use was recorded.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_forgotten_exec_s_second_launch_still_delays_the_free() {
    let ctx = own_context();
    let (a, b) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let slow = kernels::SlowFill::load(&ctx).unwrap();
    let mut y = b.alloc_zeros::<f32>(N as usize).unwrap();
    b.synchronize().unwrap();
    {
        let (g, yb, node) = slow_fill_graph(&ctx, &slow, &mut y, 5.0);
        let mut exec = g.instantiate().unwrap();
        exec.launch(&a).unwrap();
        exec.set_kernel_args(&node, (yb, 7.0, N, SPIN)).unwrap();
        exec.launch(&a).unwrap();
        std::mem::forget(exec);
    }
    drop(y);
    let z = b.clone_htod(&vec![3.0f32; N as usize]).unwrap();
    a.synchronize().unwrap();
    b.synchronize().unwrap();
    let read = b.clone_dtoh(&z).unwrap();
    assert!(
        read.iter().all(|v| *v == 3.0),
        "freed memory was written by the graph's second launch"
    );
}

/// Work the caller queues through `bound_mut` on another stream between
/// two launches on one stream is waited for by the second launch.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_launch_waits_for_work_queued_through_bound_mut_on_another_stream() {
    let ctx = own_context();
    let (a, b) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let add_one = kernels::AddOne::load(&ctx).unwrap();
    let mut x = a.alloc_zeros::<f32>(N as usize).unwrap();
    a.synchronize().unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        g.add_kernel(
            "bump",
            &add_one,
            LaunchConfig::for_elements(N, 256),
            (xb, N),
            &[],
        )
        .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&a).unwrap();
        exec.launch(&a).unwrap();
        {
            let mut bound = exec.bound_mut(xb).unwrap();
            slow_fill_on(&b, &mut bound.view_mut(), 10.0, SPIN);
        }
        exec.launch(&a).unwrap();
    }
    a.synchronize().unwrap();
    let read = a.clone_dtoh(&x).unwrap();
    assert!(
        read.iter().all(|v| *v == 11.0),
        "the third launch ran before the fill on stream b: {:?}",
        &read[..4]
    );
}
