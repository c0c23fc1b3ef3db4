use crate::common::{assert_foreign, gpu, own_context, sync};
use graph_runtime::kernel::KernelDef;
use graph_runtime::{cudarc, Graph, GraphError, LaunchConfig};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const N: u32 = 1024;

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn kernel_copy_fill_host_empty_and_event_nodes() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let x_h: Vec<f32> = (1..=N).map(|i| i as f32).collect();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut y = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut z = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut w = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut out_h = vec![0.0f32; N as usize];
    let event = ctx.new_event(None).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let (scale, add) = (
        kernels::Scale::load(&ctx).unwrap(),
        kernels::Add::load(&ctx).unwrap(),
    );
    let cfg = LaunchConfig::for_elements(N, 256);
    {
        let mut g = Graph::new(&ctx).unwrap();
        let (xb, yb, zb, wb) = (
            g.bind_mut(&mut x),
            g.bind_mut(&mut y),
            g.bind_mut(&mut z),
            g.bind_mut(&mut w),
        );
        let load = g.add_copy("load", x_h.as_slice(), xb, &[]).unwrap();
        let fill = g.add_fill("fill", yb, 5.0f32, &[]).unwrap();
        let doubled = g
            .add_kernel("scale", &scale, cfg, (xb, 2.0, N), &[load])
            .unwrap();
        let sum = g
            .add_kernel("add", &add, cfg, (xb, yb, zb, N), &[doubled.node(), fill])
            .unwrap();
        let d2d = g.add_copy("d2d", zb, wb, &[sum.node()]).unwrap();
        let record = g.add_event_record("record", &event, &[d2d]).unwrap();
        let wait = g.add_event_wait("wait", &event, &[record]).unwrap();
        let d2h = g
            .add_copy("d2h", wb, out_h.as_mut_slice(), &[wait])
            .unwrap();
        let counter = calls.clone();
        let host = g
            .add_host(
                "host",
                move || {
                    counter.fetch_add(1, Ordering::SeqCst);
                },
                &[d2h],
            )
            .unwrap();
        g.add_empty("join", &[host]).unwrap();
        assert_eq!(g.node_count(), 10);
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        sync(&stream);
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the host node ran once");
    for (i, v) in out_h.iter().enumerate() {
        assert_eq!(*v, 2.0 * (i as f32 + 1.0) + 5.0, "element {i}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn child_graph_node_runs_its_graph() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let (iota, add_one) = (
        kernels::Iota::load(&ctx).unwrap(),
        kernels::AddOne::load(&ctx).unwrap(),
    );
    let cfg = LaunchConfig::for_elements(N, 256);
    {
        let mut parent = Graph::new(&ctx).unwrap();
        let xb = parent.bind_mut(&mut x);
        let first = parent.add_kernel("iota", &iota, cfg, (xb, N), &[]).unwrap();
        // A child built from the parent shares its bound buffers.
        let mut child = parent.child_graph().unwrap();
        let inner = child
            .add_kernel("child_add_one", &add_one, cfg, (xb, N), &[])
            .unwrap();
        child
            .add_kernel(
                "child_add_one_again",
                &add_one,
                cfg,
                (xb, N),
                &[inner.node()],
            )
            .unwrap();
        let node = parent.add_child("child", child, &[first.node()]).unwrap();
        parent
            .add_kernel("add_one", &add_one, cfg, (xb, N), &[node])
            .unwrap();
        let mut exec = parent.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        sync(&stream);
    }
    let x = stream.clone_dtoh(&x).unwrap();
    assert!(
        x.iter().enumerate().all(|(i, v)| *v == i as f32 + 3.0),
        "{:?}",
        &x[..4]
    );
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn capture_node_joins_graph() {
    // cudarc's event tracking stays on (two streams in this context): the
    // work reaches `x` through the capture's view, which leaves tracking to
    // the exec's launches.
    let ctx = own_context();
    let stream = ctx.new_stream().unwrap();
    let other = ctx.new_stream().unwrap();
    assert!(ctx.is_managing_stream_synchronization());
    let mut x = other.clone_htod(&vec![7.0f32; N as usize]).unwrap();
    let add_one = kernels::AddOne::load(&ctx).unwrap();
    for round in 1..=2 {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        // SAFETY: the work touches only `xb`, through its view.
        let zeroed = unsafe {
            g.add_capture("zero", &stream, &[], |s| {
                s.stream()
                    .memset_zeros(&mut s.write(xb))
                    .map_err(|e| graph_runtime::capture::captured("memset_zeros", e))
            })
        }
        .unwrap();
        g.add_kernel(
            "add_one",
            &add_one,
            LaunchConfig::for_elements(N, 256),
            (xb, N),
            &[zeroed],
        )
        .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        drop(exec);
        drop(g);
        // The exec's drop waited for the launch; read on the other stream.
        // Then cudarc writes `x` there, and tracking orders the next
        // round's launch after that write (no synchronize).
        assert!(
            other.clone_dtoh(&x).unwrap().iter().all(|v| *v == 1.0),
            "round {round}"
        );
        other
            .memcpy_htod(&vec![7.0f32; N as usize], &mut x)
            .unwrap();
    }
    ctx.check_err().unwrap();
}

/// A view declares the node's use: writing a buffer bound read-only, or
/// one of another graph, is refused naming the node.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_capture_writing_a_read_only_or_foreign_buffer_is_refused() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let x = stream.clone_htod(&vec![3.0f32; N as usize]).unwrap();
    let mut y = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut z = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut g = Graph::new(&ctx).unwrap();
    let mut other = Graph::new(&ctx).unwrap();
    let (xb, zb) = (g.bind(&x), g.bind_mut(&mut z));
    let yb = other.bind_mut(&mut y);
    let zero = |b| {
        move |s: &graph_runtime::capture::Capture<'_, '_>| {
            s.stream()
                .memset_zeros(&mut s.write(b))
                .map_err(|e| graph_runtime::capture::captured("memset_zeros", e))
        }
    };
    // SAFETY: the work touches only the views' buffers.
    let err = unsafe { g.add_capture("read_only", &stream, &[], zero(xb)) }.unwrap_err();
    assert!(
        matches!(&err, GraphError::ReadOnlyWrite { label } if label == "read_only"),
        "{err:?}"
    );
    // SAFETY: as above.
    let err = unsafe { g.add_capture("foreign", &stream, &[], zero(yb)) }.unwrap_err();
    assert_foreign(&err, graph_runtime::error::Foreign::Buffer, "foreign");
    // Reading it is allowed, and the graph goes on.
    // SAFETY: as above.
    unsafe {
        g.add_capture("copy", &stream, &[], |s| {
            s.stream()
                .memcpy_dtod(&s.read(xb), &mut s.write(zb))
                .map_err(|e| graph_runtime::capture::captured("memcpy_dtod", e))
        })
    }
    .unwrap();
    let mut exec = g.instantiate().unwrap();
    exec.launch(&stream).unwrap();
    exec.synchronize().unwrap();
    drop(exec);
    drop((g, other));
    assert!(stream.clone_dtoh(&z).unwrap().iter().all(|v| *v == 3.0));
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn capture_invalidated_by_event_tracking_is_ended_and_explained() {
    let ctx = own_context();
    let a = ctx.new_stream().unwrap();
    let b = ctx.new_stream().unwrap();
    assert!(ctx.is_managing_stream_synchronization());
    let mut x = a.clone_htod(&vec![7.0f32; N as usize]).unwrap();
    a.synchronize().unwrap();
    let mut g = Graph::new(&ctx).unwrap();
    // SAFETY: `x` outlives the graph; the capture is expected to fail.
    let err = unsafe {
        g.add_capture("zero", &b, &[], |s| {
            s.stream()
                .memset_zeros(&mut x)
                .map_err(|e| graph_runtime::capture::captured("memset_zeros", e))
        })
    }
    .unwrap_err();
    assert!(matches!(err, GraphError::Capture { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("node `zero`") && text.contains("Capture::write"),
        "{text}"
    );
    // cudarc may have recorded the failed event record of the work's memset
    // (its own error, reported at the context's next check): take it.
    let _ = ctx.check_err();
    // The capture was ended: the stream works normally again.
    assert_eq!(
        b.capture_status().unwrap(),
        cudarc::driver::sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
    );
    drop(g);
    let _ = ctx.check_err();
}

/// Kernel nodes are added without a context check per node (their function
/// decides their context): they must still run in the graph's context when
/// another context, or none, is current while they are added.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn kernel_nodes_run_in_their_functions_context_whatever_is_current() {
    let ctx = gpu();
    let other = own_context();
    let stream = ctx.new_stream().unwrap();
    let scale = kernels::Scale::load(&ctx).unwrap();
    let x_h: Vec<f32> = (1..=N).map(|i| i as f32).collect();
    let mut x = stream.clone_htod(&x_h).unwrap();
    let cfg = LaunchConfig::for_elements(N, 256);
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        let first = g
            .add_kernel("first", &scale, cfg, (xb, 2.0, N), &[])
            .unwrap();
        other.bind_to_thread().unwrap();
        let second = g
            .add_kernel("second", &scale, cfg, (xb, 3.0, N), &[first.node()])
            .unwrap();
        // SAFETY: clears this thread's current context; nothing else on this
        // thread relies on it until the graph binds its own again.
        unsafe { cudarc::driver::sys::cuCtxSetCurrent(std::ptr::null_mut()) }
            .result()
            .unwrap();
        g.add_kernel("third", &scale, cfg, (xb, 5.0, N), &[second.node()])
            .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        sync(&stream);
    }
    let out = stream.clone_dtoh(&x).unwrap();
    sync(&stream);
    let expected: Vec<f32> = x_h.iter().map(|v| v * 30.0).collect();
    assert_eq!(out, expected);
}

/// Fills of 8-byte values: halves that differ take the runtime's fill
/// kernel (1.5f64, a u64 pattern), equal halves a memset of 4-byte words
/// (0.0f64, -1i64), at the top level and inside an IF body.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn eight_byte_fills_write_every_element() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let n = 3000usize;
    let mut a = stream.clone_htod(&vec![9.0f64; n]).unwrap();
    let mut b = stream.clone_htod(&vec![9.0f64; n]).unwrap();
    let mut c = stream.alloc_zeros::<u64>(n).unwrap();
    let mut d = stream.alloc_zeros::<i64>(n + 1).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let (ab, bb, cb, db) = (
            g.bind_mut(&mut a),
            g.bind_mut(&mut b),
            g.bind_mut(&mut c),
            g.bind_mut(&mut d),
        );
        g.add_fill("wide", ab, 1.5f64, &[]).unwrap();
        g.add_fill("zero", bb, 0.0f64, &[]).unwrap();
        let go = g.cond_handle(Some(1)).unwrap();
        g.add_if("body", go, &[], |body| {
            body.add_fill("pattern", cb, 0x0000_0001_0000_0002u64, &[])?;
            body.add_fill("minus", db.slice(0..n), -1i64, &[])?;
            Ok(())
        })
        .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        sync(&stream);
    }
    assert!(stream.clone_dtoh(&a).unwrap().iter().all(|v| *v == 1.5));
    assert!(stream.clone_dtoh(&b).unwrap().iter().all(|v| *v == 0.0));
    assert!(stream
        .clone_dtoh(&c)
        .unwrap()
        .iter()
        .all(|v| *v == 0x0000_0001_0000_0002));
    let d = stream.clone_dtoh(&d).unwrap();
    assert!(d[..n].iter().all(|v| *v == -1));
    assert_eq!(d[n], 0, "the element past the slice is untouched");
}

/// Captured `cudaMallocAsync`/`cudaFreeAsync` become memory nodes, which a
/// child graph node may not hold: refused at the capture node, naming it,
/// and the graph and stream go on.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_capture_that_allocates_is_refused_naming_the_node() {
    let ctx = own_context();
    // SAFETY: this context's slices are all used on one stream.
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.new_stream().unwrap();
    let mut g = Graph::new(&ctx).unwrap();
    // SAFETY: the work touches only the memory it allocates.
    let err = unsafe {
        g.add_capture("scratch", &stream, &[], |s| {
            let tmp = s
                .stream()
                .alloc_zeros::<f32>(256)
                .map_err(|e| graph_runtime::capture::captured("alloc_zeros", e))?;
            drop(tmp);
            Ok(())
        })
    }
    .unwrap_err();
    assert!(
        matches!(
            &err,
            GraphError::Unsupported {
                label: Some(label),
                what: graph_runtime::error::Unsupported::CapturedMemoryNode,
                ..
            } if label == "scratch"
        ),
        "{err:?}"
    );
    g.add_empty("after", &[]).unwrap();
    let mut exec = g.instantiate().unwrap();
    exec.launch(&stream).unwrap();
    exec.synchronize().unwrap();
}

extern "C" fn nothing(_: *mut std::ffi::c_void) {}

/// A capture inside a conditional body may hold only what bodies allow:
/// captured kernels are accepted (the WHILE runs), a captured host function
/// is refused naming the node.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_capture_in_a_body_holds_only_what_bodies_allow() {
    use graph_runtime::cudarc::driver::{LaunchConfig as CudarcConfig, PushKernelArg};
    let ctx = own_context();
    // SAFETY: this context's slices are all used on one stream.
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.new_stream().unwrap();
    let step = kernels::CountdownStep::load(&ctx).unwrap();
    let mut counter = stream.clone_htod(&[5i32]).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let cb = g.bind_mut(&mut counter);
        let again = g.cond_handle(Some(1)).unwrap();
        g.add_while("spin", again, &[], |body| {
            let host_work = |s: &graph_runtime::capture::Capture<'_, '_>| {
                // SAFETY: a function that does nothing, no argument.
                unsafe {
                    cudarc::driver::result::stream::launch_host_function(
                        s.stream().cu_stream(),
                        nothing,
                        std::ptr::null_mut(),
                    )
                }
                .map_err(|e| graph_runtime::capture::captured("cuLaunchHostFunc", e))
            };
            // SAFETY: the work touches no memory.
            let err = unsafe { body.add_capture("host", &stream, &[], host_work) }.unwrap_err();
            assert!(
                matches!(
                    &err,
                    GraphError::Unsupported {
                        label: Some(label),
                        what: graph_runtime::error::Unsupported::CapturedInBody { what },
                        ..
                    } if label == "host" && what.contains("a host function")
                ),
                "{err:?}"
            );
            let (handle, ptr) = (again.raw(), cb.device_ptr());
            let step_work = |s: &graph_runtime::capture::Capture<'_, '_>| {
                let config = CudarcConfig {
                    grid_dim: (1, 1, 1),
                    block_dim: (1, 1, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: countdown_step(unsigned long long, int*).
                unsafe {
                    s.stream()
                        .launch_builder(step.function())
                        .arg(&handle)
                        .arg(&ptr)
                        .launch(config)
                }
                .map(|_| ())
                .map_err(|e| graph_runtime::capture::captured("countdown_step", e))
            };
            // SAFETY: the counter is bound to the graph (it outlives the
            // graph and its execs); the kernel sets only `again`, declared.
            unsafe { body.add_capture_setting("step", &stream, &[], &[again], step_work) }?;
            Ok(())
        })
        .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
    }
    assert_eq!(stream.clone_dtoh(&counter).unwrap(), vec![0]);
}
