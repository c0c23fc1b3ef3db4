//! Declared kernels launched on streams (`Kernel::on`): the checks of a
//! kernel node, cudarc's tracking across streams, `Escaped` arguments,
//! and one declaration serving a graph and a stream alike.

use crate::common::{escaping_iota, gpu, graph_memory_lock, own_context, sync};
use graph_runtime::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use graph_runtime::error::{ArgumentRefusal, LaunchRefusal};
use graph_runtime::kernel::KernelDef;
use graph_runtime::{Graph, GraphError, LaunchConfig};

const N: u32 = 1 << 20;
/// About 25 ms of spinning at the H200's clock: long enough to expose a race.
const SPIN: i64 = 50_000_000;

/// The reason of a refused launch; panics on any other outcome.
fn refused(result: graph_runtime::Result<()>) -> LaunchRefusal {
    match result {
        Err(GraphError::LaunchRefused { reason, .. }) => reason,
        other => panic!("expected LaunchRefused, got {other:?}"),
    }
}

/// The argument check that refused a launch; panics on any other refusal.
fn argument_check(reason: LaunchRefusal) -> ArgumentRefusal {
    match reason {
        LaunchRefusal::Arguments(check) => check,
        other => panic!("expected an argument check, got {other:?}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn declared_kernels_run_on_a_stream() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let host: Vec<f32> = (0..N).map(|i| (i % 1000) as f32).collect();
    let x = stream.clone_htod(&host).unwrap();
    let mut y = stream.clone_htod(&host).unwrap();
    let mut sum = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let (scale, add) = (
        kernels::Scale::load(&ctx).unwrap(),
        kernels::Add::load(&ctx).unwrap(),
    );
    let config = LaunchConfig::for_elements(N, 256);
    let mut launch = scale.on(&stream);
    let yb = launch.bind_mut(&mut y);
    launch.launch(config, (yb, 3.0, N)).unwrap();
    let mut launch = add.on(&stream);
    let (xb, yb, sb) = (launch.bind(&x), launch.bind(&y), launch.bind_mut(&mut sum));
    launch.launch(config, (xb, yb, sb, N)).unwrap();
    let read = stream.clone_dtoh(&sum).unwrap();
    assert!(
        read.iter().zip(&host).all(|(s, h)| *s == 4.0 * h),
        "sum != x + 3x: {:?}",
        &read[..4]
    );
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_stream_launch_refuses_what_a_kernel_node_refuses() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let scale = kernels::Scale::load(&ctx).unwrap();
    let mut x = stream.alloc_zeros::<f32>(100).unwrap();
    let ro = stream.alloc_zeros::<f32>(100).unwrap();
    let config = LaunchConfig::for_elements(100, 128);
    // A count past the buffer's end.
    let mut launch = scale.on(&stream);
    let xb = launch.bind_mut(&mut x);
    let reason = refused(launch.launch(config, (xb, 2.0, 101)));
    assert_eq!(
        argument_check(reason),
        ArgumentRefusal::LengthPastBuffer {
            argument: 2,
            length: 101,
            buffer: 0,
            elements: 100
        }
    );
    // A write through a read-only binding.
    let mut launch = scale.on(&stream);
    let rb = launch.bind(&ro);
    let reason = refused(launch.launch(config, (rb, 2.0, 100)));
    assert_eq!(
        argument_check(reason),
        ArgumentRefusal::WrittenButReadOnly { argument: 0 }
    );
    // A buffer bound by another launch, then by a graph.
    let mut first = scale.on(&stream);
    let xb = first.bind_mut(&mut x);
    let reason = refused(scale.on(&stream).launch(config, (xb, 2.0, 100)));
    assert!(
        matches!(reason, LaunchRefusal::NotBound { .. }),
        "{reason:?}"
    );
    drop(first);
    let mut g = Graph::new(&ctx).unwrap();
    let gb = g.bind_mut(&mut x);
    let reason = refused(scale.on(&stream).launch(config, (gb, 2.0, 100)));
    assert!(
        matches!(reason, LaunchRefusal::NotBound { .. }),
        "{reason:?}"
    );
    drop(g);
    // A launch configuration a node refuses.
    let mut launch = scale.on(&stream);
    let xb = launch.bind_mut(&mut x);
    let reason = refused(launch.launch(LaunchConfig::new(0, 128), (xb, 2.0, 100)));
    assert_eq!(
        argument_check(reason),
        ArgumentRefusal::ZeroGrid { x: 0, y: 1, z: 1 }
    );
    // A conditional handle is a graph's.
    let mut g = Graph::new(&ctx).unwrap();
    let handle = g.cond_handle(Some(0)).unwrap();
    let set = kernels::SetCondition::load(&ctx).unwrap();
    let reason = refused(set.on(&stream).launch(LaunchConfig::new(1, 1), (handle, 1)));
    assert_eq!(reason, LaunchRefusal::GraphOnlyArgument);
    // A part sliced past the buffer's end, named as such (not as a length
    // past an empty buffer), even with a count of 0.
    for count in [0, 10] {
        let mut launch = scale.on(&stream);
        let xb = launch.bind_mut(&mut x);
        let reason = refused(launch.launch(config, (xb.slice(90..110), 2.0, count)));
        assert_eq!(argument_check(reason), ArgumentRefusal::PartPastEnd);
    }
    // Nothing ran: x is still all zero.
    assert!(stream.clone_dtoh(&x).unwrap().iter().all(|v| *v == 0.0));
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_stream_launch_refuses_other_contexts_and_capturing_streams() {
    let (ctx, other) = (gpu(), own_context());
    let stream = ctx.new_stream().unwrap();
    let theirs = other.new_stream().unwrap();
    let add_one_here = kernels::AddOne::load(&ctx).unwrap();
    let mut y = theirs.alloc_zeros::<f32>(64).unwrap();
    let config = LaunchConfig::for_elements(64, 64);
    // The kernel of one context on a stream of another.
    let mut launch = add_one_here.on(&theirs);
    let yb = launch.bind_mut(&mut y);
    let reason = refused(launch.launch(config, (yb, 64)));
    assert_eq!(reason, LaunchRefusal::KernelOfOtherContext);
    // A buffer of another context.
    let mut launch = add_one_here.on(&stream);
    let yb = launch.bind_mut(&mut y);
    let reason = refused(launch.launch(config, (yb, 64)));
    assert!(
        matches!(reason, LaunchRefusal::NotBound { .. }),
        "{reason:?}"
    );
    // A capturing stream: cudarc's events could not order a captured
    // launch. (In the test's own context: a capture in the primary one
    // would disturb the tests running beside it.)
    let add_one_theirs = kernels::AddOne::load(&other).unwrap();
    let capturing = other.new_stream().unwrap();
    capturing
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
        .unwrap();
    let mut launch = add_one_theirs.on(&capturing);
    let yb = launch.bind_mut(&mut y);
    let reason = refused(launch.launch(config, (yb, 64)));
    assert_eq!(reason, LaunchRefusal::Capturing);
    let _ = capturing.end_capture(CUgraphInstantiate_flags(0));
    sync(&theirs);
    assert!(theirs.clone_dtoh(&y).unwrap().iter().all(|v| *v == 0.0));
}

/// A slow write launched on stream a, then a read on stream b and a free
/// on b: cudarc orders both after the write through the events the launch
/// recorded.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_stream_launch_is_ordered_by_cudarc_across_streams() {
    let ctx = own_context();
    let (a, b) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    assert!(ctx.is_managing_stream_synchronization());
    let slow = kernels::SlowFill::load(&ctx).unwrap();
    let config = LaunchConfig::new(132, 256);
    let mut y = b.alloc_zeros::<f32>(N as usize).unwrap();
    sync(&b);
    let mut launch = slow.on(&a);
    let yb = launch.bind_mut(&mut y);
    launch.launch(config, (yb, 7.0, N, SPIN)).unwrap();
    let read = b.clone_dtoh(&y).unwrap();
    assert!(
        read.iter().all(|v| *v == 7.0),
        "stream b read {:?} before the launch on a finished",
        &read[..4]
    );
    // Written again on a, then dropped: the free on b waits for the write.
    let mut launch = slow.on(&a);
    let yb = launch.bind_mut(&mut y);
    launch.launch(config, (yb, 5.0, N, SPIN)).unwrap();
    drop(y);
    let z = b.clone_htod(&vec![3.0f32; N as usize]).unwrap();
    a.synchronize().unwrap();
    let read = b.clone_dtoh(&z).unwrap();
    assert!(
        read.iter().all(|v| *v == 3.0),
        "the launch wrote freed memory"
    );
}

/// One declaration, a graph and a stream: the same results.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn one_declaration_serves_a_graph_and_a_stream() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let (scale, add_one) = (
        kernels::Scale::load(&ctx).unwrap(),
        kernels::AddOne::load(&ctx).unwrap(),
    );
    let host: Vec<f32> = (0..N).map(|i| (i % 97) as f32).collect();
    let mut via_graph = stream.clone_htod(&host).unwrap();
    let mut via_stream = stream.clone_htod(&host).unwrap();
    let config = LaunchConfig::for_elements(N, 256);
    {
        let mut g = Graph::new(&ctx).unwrap();
        let x = g.bind_mut(&mut via_graph);
        let s = g
            .add_kernel("scale", &scale, config, (x, 2.0, N), &[])
            .unwrap();
        g.add_kernel("add_one", &add_one, config, (x, N), &[s.node()])
            .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
    }
    let mut launch = scale.on(&stream);
    let x = launch.bind_mut(&mut via_stream);
    launch.launch(config, (x, 2.0, N)).unwrap();
    let mut launch = add_one.on(&stream);
    let x = launch.bind_mut(&mut via_stream);
    launch.launch(config, (x, N)).unwrap();
    let (g, s) = (
        stream.clone_dtoh(&via_graph).unwrap(),
        stream.clone_dtoh(&via_stream).unwrap(),
    );
    assert_eq!(g, s);
    assert!(g.iter().zip(&host).all(|(v, h)| *v == 2.0 * h + 1.0));
}

/// A graph allocation handed out as an `Escaped` goes to a stream launch,
/// written and then read.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn an_escaped_allocation_is_a_stream_launch_argument() {
    let ctx = gpu();
    let _lock = graph_memory_lock();
    let stream = ctx.new_stream().unwrap();
    let (scale, add) = (
        kernels::Scale::load(&ctx).unwrap(),
        kernels::Add::load(&ctx).unwrap(),
    );
    let (mut maker, data) = escaping_iota(&ctx, N);
    maker.launch(&stream).unwrap();
    let mut escaped = maker.take_escaped(data).unwrap();
    let config = LaunchConfig::for_elements(N, 256);
    let mut launch = scale.on(&stream);
    let e = launch.bind_mut(&mut escaped);
    launch.launch(config, (e, 2.0, N)).unwrap();
    let mut out = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut launch = add.on(&stream);
    let (e1, e2, o) = (
        launch.bind(&escaped),
        launch.bind(&escaped),
        launch.bind_mut(&mut out),
    );
    launch.launch(config, (e1, e2, o, N)).unwrap();
    let read = stream.clone_dtoh(&out).unwrap();
    assert!(
        read.iter().enumerate().all(|(i, v)| *v == 4.0 * i as f32),
        "{:?}",
        &read[..4]
    );
    drop(escaped);
    maker.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn the_driver_version_is_at_least_the_one_conditional_nodes_need() {
    gpu();
    let version = graph_runtime::driver::driver_version().unwrap();
    assert!(
        version
            >= graph_runtime::driver::DriverVersion {
                major: 12,
                minor: 4
            },
        "{version}"
    );
    let mut raw = 0;
    // SAFETY: an out-pointer to a local.
    unsafe { graph_runtime::cudarc::driver::sys::cuDriverGetVersion(&mut raw) }
        .result()
        .unwrap();
    assert_eq!(raw as u32, version.major * 1000 + version.minor * 10);
    println!("CUDA driver {version}");
}

/// cudarc stops tracking a context's slices once its last `new_stream`
/// stream is dropped, and then frees a slice on its own stream without
/// waiting on its events. A launch on such a stream, the stream dropped,
/// the slice dropped, its memory reused on the slice's stream: the
/// launch made the slice's stream wait for it, so the reuse comes after.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_buffer_freed_after_tracking_stopped_still_waits_for_its_launch() {
    let ctx = own_context();
    let home = ctx.default_stream();
    let slow = kernels::SlowFill::load(&ctx).unwrap();
    let mut x = home.alloc_zeros::<f32>(N as usize).unwrap();
    sync(&home);
    {
        let launch_stream = ctx.new_stream().unwrap();
        let mut launch = slow.on(&launch_stream);
        let xb = launch.bind_mut(&mut x);
        launch
            .launch(LaunchConfig::new(132, 256), (xb, 7.0, N, SPIN))
            .unwrap();
    }
    // No stream made by new_stream is left: cudarc's tracking is off.
    drop(x);
    let z = home.clone_htod(&vec![3.0f32; N as usize]).unwrap();
    ctx.synchronize().unwrap();
    assert!(
        home.clone_dtoh(&z).unwrap().iter().all(|v| *v == 3.0),
        "the launch wrote memory freed and reused under it"
    );
}

/// A slice a live exec has bound, reached between its launches through
/// `bound_mut` and launched on with a declared kernel: ordered after the
/// exec's launch and before its next one (the exec waits for the view's
/// work), on another stream.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_live_exec_s_slice_takes_a_stream_launch_between_launches() {
    let ctx = own_context();
    let (a, b) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let slow = kernels::SlowFill::load(&ctx).unwrap();
    let add_one = kernels::AddOne::load(&ctx).unwrap();
    let mut x = a.alloc_zeros::<f32>(N as usize).unwrap();
    sync(&a);
    // The slow fill strides over the grid; the others take an element each.
    let (spin, each) = (
        LaunchConfig::new(132, 256),
        LaunchConfig::for_elements(N, 256),
    );
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        let fill = g
            .add_kernel("fill", &slow, spin, (xb, 2.0, N, SPIN), &[])
            .unwrap();
        g.add_kernel("bump", &add_one, each, (xb, N), &[fill.node()])
            .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&a).unwrap();
        {
            // x = 3 once the launch is done; the stream launch on b doubles it.
            let mut bound = exec.bound_mut(xb).unwrap();
            let mut view = bound.view_mut();
            let scale = kernels::Scale::load(&ctx).unwrap();
            let mut launch = scale.on(&b);
            let vb = launch.bind_mut(&mut view);
            launch.launch(each, (vb, 2.0, N)).unwrap();
            // After the exec's slow fill and bump, then doubled: 6.
            let read = b.clone_dtoh(&view).unwrap();
            assert!(read.iter().all(|v| *v == 6.0), "{:?}", &read[..4]);
        }
        // Refills with 2 and bumps: 3 again, only after the doubling.
        exec.launch(&a).unwrap();
        let mut bound = exec.bound_mut(xb).unwrap();
        let read = b.clone_dtoh(&bound.view()).unwrap();
        assert!(read.iter().all(|v| *v == 3.0), "{:?}", &read[..4]);
        let _ = bound.view_mut();
    }
    let read = a.clone_dtoh(&x).unwrap();
    assert!(read.iter().all(|v| *v == 3.0));
}
