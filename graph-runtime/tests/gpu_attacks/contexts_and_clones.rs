//! Attacks from the second review: a slice or an event of another context
//! (cudarc cannot track it on this context's streams), the per-thread
//! default stream (a different stream on every thread, so a dropped exec
//! would wait on the wrong one), a clone or a child sharing host buffers
//! with another exec, host memory copied inside a conditional body, a
//! free of part of an allocation, and a host buffer reached through an
//! exec instantiated before it was added.

use crate::common::{assert_foreign, gpu, graph_memory_lock, own_context};
use crate::{expect_foreign, expect_refused};
use graph_runtime::error::{Foreign, StreamRefusal, Unsupported};
use graph_runtime::kernel::KernelDef;
use graph_runtime::{Graph, GraphError, LaunchConfig};

const N: u32 = 1024;

/// Attack: bind a slice of context B into a graph of context A, and an
/// event of B. Must happen: every node using the slice is refused as a
/// foreign buffer naming it; the event nodes too.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_slice_or_event_of_another_context_is_refused() {
    let a = own_context();
    let b = own_context();
    let add_one = kernels::AddOne::load(&a).unwrap();
    let home_b = b.new_stream().unwrap();
    let mut x = home_b.alloc_zeros::<f32>(N as usize).unwrap();
    let y = home_b.alloc_zeros::<f32>(N as usize).unwrap();
    let event = b.new_event(None).unwrap();
    let mut host = vec![0.0f32; N as usize];
    let mut g = Graph::new(&a).unwrap();
    let (xb, yb) = (g.bind_mut(&mut x), g.bind(&y));
    let cfg = LaunchConfig::for_elements(N, 256);
    let err = g
        .add_kernel("write_b", &add_one, cfg, (xb, N), &[])
        .unwrap_err();
    expect_foreign(&err, Some("write_b"));
    let err = g.add_copy("read_b", yb, &mut host, &[]).unwrap_err();
    expect_foreign(&err, Some("read_b"));
    let err = g.add_event_record("record_b", &event, &[]).unwrap_err();
    expect_foreign(&err, Some("record_b"));
    let err = g.add_event_wait("wait_b", &event, &[]).unwrap_err();
    expect_foreign(&err, Some("wait_b"));
}

/// Attack: add a kernel loaded in context B to a graph of context A, on
/// A's own buffer. The driver runs a kernel node in its function's
/// context (a node's context is ignored when a function is set), so the
/// kernel would run in B on A's addresses. Must happen: the node is
/// refused as a foreign kernel naming it, in a conditional body too; the
/// same kernel loaded in A is taken, and its launch writes the buffer.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_kernel_of_another_context_is_refused() {
    let a = own_context();
    let b = own_context();
    let (in_a, in_b) = (
        kernels::AddOne::load(&a).unwrap(),
        kernels::AddOne::load(&b).unwrap(),
    );
    let stream = a.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let cfg = LaunchConfig::for_elements(N, 256);
    {
        let mut g = Graph::new(&a).unwrap();
        let xb = g.bind_mut(&mut x);
        let err = g
            .add_kernel("from_b", &in_b, cfg, (xb, N), &[])
            .unwrap_err();
        assert_foreign(&err, Foreign::Kernel, "from_b");
        let handle = g.cond_handle(Some(1)).unwrap();
        let err = g
            .add_if("when", handle, &[], |body| {
                body.add_kernel("from_b_in_body", &in_b, cfg, (xb, N), &[])?;
                Ok(())
            })
            .unwrap_err();
        assert_foreign(&err, Foreign::Kernel, "from_b_in_body");
    }
    {
        let mut g = Graph::new(&a).unwrap();
        let xb = g.bind_mut(&mut x);
        g.add_kernel("from_a", &in_a, cfg, (xb, N), &[]).unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
    }
    let x = stream.clone_dtoh(&x).unwrap();
    assert!(x.iter().all(|v| *v == 1.0), "{:?}", &x[..4]);
}

/// Attack: launch on `ctx.per_thread_stream()` and drop the exec on
/// another thread (its wait would name that thread's stream). Must happen:
/// the launch is refused; a stream of the context works.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn the_per_thread_default_stream_is_refused() {
    let ctx = gpu();
    let add_one = kernels::AddOne::load(&ctx).unwrap();
    let stream = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
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
        let err = exec.launch(&ctx.per_thread_stream()).unwrap_err();
        assert!(
            matches!(
                err,
                GraphError::StreamRefused {
                    operation: "launch",
                    stream: StreamRefusal::PerThreadDefault
                }
            ),
            "{err:?}"
        );
        exec.launch(&stream).unwrap();
        std::thread::scope(|s| {
            s.spawn(move || drop(exec));
        });
    }
    assert!(stream.clone_dtoh(&x).unwrap().iter().all(|v| *v == 1.0));
}

/// Attack: a stream launch of a declared kernel binding a slice allocated
/// on the per-thread default stream. The launch joins the slices' own
/// streams so that cudarc's frees follow it (once cudarc's tracking is
/// off); the per-thread stream is another stream on the thread that drops
/// the slice, so the join would order nothing for that free.
///
/// Must happen: that launch is refused (`LaunchRefusal::PerThreadBuffer`)
/// before anything is queued; a launch on the per-thread stream of a slice
/// of a stream of the context runs (the per-thread stream as the launch
/// stream is this thread's, where the records go).
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn stream_launches_refuse_buffers_of_the_per_thread_default_stream() {
    use graph_runtime::error::LaunchRefusal;
    let ctx = gpu();
    let add_one = kernels::AddOne::load(&ctx).unwrap();
    let (stream, per_thread) = (ctx.new_stream().unwrap(), ctx.per_thread_stream());
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut y = per_thread.alloc_zeros::<f32>(N as usize).unwrap();
    let of_per_thread = {
        let mut launch = add_one.on(&stream);
        let yb = launch.bind_mut(&mut y);
        launch.launch(LaunchConfig::for_elements(N, 256), (yb, N))
    };
    assert!(
        matches!(
            of_per_thread,
            Err(GraphError::LaunchRefused {
                reason: LaunchRefusal::PerThreadBuffer,
                ..
            })
        ),
        "{of_per_thread:?}"
    );
    {
        let mut launch = add_one.on(&per_thread);
        let xb = launch.bind_mut(&mut x);
        launch
            .launch(LaunchConfig::for_elements(N, 256), (xb, N))
            .unwrap();
    }
    assert!(stream.clone_dtoh(&x).unwrap().iter().all(|v| *v == 1.0));
    assert!(stream.clone_dtoh(&y).unwrap().iter().all(|v| *v == 0.0));
}

/// Attack: two `CudaContext` values of one context (two
/// `CudaContext::new(0)` calls): B, with no stream of its own, allocates x
/// (its tracking then skips x's waits: B has no extra stream); a graph of
/// A binds x, an exec of A launches on a stream of B, and a stream launch
/// on A's stream binds x.
///
/// Must happen: the node using x is refused as a foreign buffer naming
/// it, a child graph of B and a kernel argument naming a device exec of
/// B as foreign handles naming their nodes, an update
/// from a graph of B as an `Update`, the launch on B's stream as a
/// foreign stream, and the stream launch as `NotBound`; an event of B,
/// which nothing tracks, is accepted.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_slice_or_stream_of_another_context_value_is_refused() {
    use graph_runtime::cudarc::driver::CudaContext;
    use graph_runtime::error::LaunchRefusal;
    gpu();
    let (a, b) = (CudaContext::new(0).unwrap(), CudaContext::new(0).unwrap());
    assert_eq!(a.cu_ctx(), b.cu_ctx(), "two values of the primary context");
    let add_one = kernels::AddOne::load(&a).unwrap();
    let mut x = b.default_stream().alloc_zeros::<f32>(N as usize).unwrap();
    let cfg = LaunchConfig::for_elements(N, 256);
    {
        let mut g = Graph::new(&a).unwrap();
        let xb = g.bind_mut(&mut x);
        let err = g
            .add_kernel("of_b", &add_one, cfg, (xb, N), &[])
            .unwrap_err();
        expect_foreign(&err, Some("of_b"));
    }
    {
        let mut child = Graph::new(&b).unwrap();
        let xb = child.bind_mut(&mut x);
        child
            .add_kernel("of_b", &add_one, cfg, (xb, N), &[])
            .unwrap();
        let mut parent = Graph::new(&a).unwrap();
        let err = parent.add_child("child_b", child, &[]).unwrap_err();
        expect_foreign(&err, Some("child_b"));
    }
    {
        // An exec of B launched from the device by a graph of A.
        let device = graph_runtime::InstantiateOptions::default().device_launch(true);
        let mut of_b = Graph::new(&b).unwrap();
        let xb = of_b.bind_mut(&mut x);
        of_b.add_kernel(
            "of_b",
            &kernels::AddOne::load(&b).unwrap(),
            cfg,
            (xb, N),
            &[],
        )
        .unwrap();
        let mut target = of_b.instantiate_with(&device).unwrap();
        let stream_b = b.new_stream().unwrap();
        target.upload(&stream_b).unwrap();
        stream_b.synchronize().unwrap();
        let handle = target.device_handle().unwrap();
        let launch = kernels::LaunchGraph::load(&a).unwrap();
        let mut launcher = Graph::new(&a).unwrap();
        let err = launcher
            .add_kernel(
                "launch_b",
                &launch,
                LaunchConfig::new(1, 1),
                (handle, 0u32),
                &[],
            )
            .unwrap_err();
        expect_foreign(&err, Some("launch_b"));
    }
    let event = b.new_event(None).unwrap();
    let mut g = Graph::new(&a).unwrap();
    g.add_event_record("record_b", &event, &[]).unwrap();
    let mut exec = g.instantiate().unwrap();
    {
        let mut of_b = Graph::new(&b).unwrap();
        of_b.add_event_record("record_b", &event, &[]).unwrap();
        let err = exec.update(&of_b).unwrap_err();
        assert!(matches!(err, GraphError::Update { .. }), "{err:?}");
    }
    let err = exec.launch(&b.new_stream().unwrap()).unwrap_err();
    assert!(matches!(err, GraphError::ForeignHandle { .. }), "{err:?}");
    let of_b = {
        let stream = a.new_stream().unwrap();
        let mut launch = add_one.on(&stream);
        let xb = launch.bind_mut(&mut x);
        launch.launch(cfg, (xb, N))
    };
    assert!(
        matches!(
            of_b,
            Err(GraphError::LaunchRefused {
                reason: LaunchRefusal::NotBound { argument: 0 },
                ..
            })
        ),
        "{of_b:?}"
    );
}

/// Attack: a graph with a host buffer cloned (`try_clone`), both
/// instantiated, hoping for two execs writing one buffer; the original's
/// handle used with the clone's exec; the clone added as a child of
/// another graph. Must happen: the clone has host memory of its own (both
/// execs run, each bumps its own buffer once), the original's handle is
/// refused by the clone's exec, and the child is refused naming the node.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn host_buffers_are_not_shared_by_clones_or_parents() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut g = Graph::new(&ctx).unwrap();
    let xb = g.bind(&x);
    let host = g.add_host_buffer::<f32>(N as usize).unwrap();
    let back = g.add_copy("back", xb, &host, &[]).unwrap();
    g.add_host_writing("bump", &host, |d: &mut [f32]| d[0] += 1.0, &[back])
        .unwrap();
    let clone = g.try_clone().unwrap();
    let mine = clone.host_buffer(&host).unwrap();
    let (mut exec, mut theirs) = (g.instantiate().unwrap(), clone.instantiate().unwrap());
    exec.launch(&stream).unwrap();
    theirs.launch(&stream).unwrap();
    theirs.launch(&stream).unwrap();
    assert_eq!(exec.host_data(&host).unwrap()[0], 1.0);
    assert_eq!(theirs.host_data(&mine).unwrap()[0], 1.0);
    assert!(matches!(
        theirs.host_data(&host),
        Err(GraphError::ForeignHandle { .. })
    ));
    // The clone's copies land in its own memory too.
    theirs.host_data(&mine).unwrap()[5] = 9.0;
    theirs.launch(&stream).unwrap();
    assert_eq!(theirs.host_data(&mine).unwrap()[5], 0.0);
    assert_eq!(exec.host_data(&host).unwrap()[5], 0.0);
    drop((exec, theirs));
    let mut parent = Graph::new(&ctx).unwrap();
    let err = parent.add_child("child", clone, &[]).unwrap_err();
    expect_refused!(
        &err,
        GraphError::Unsupported {
            what: Unsupported::HostBuffersInChild,
            ..
        },
        "child"
    );
}

/// Attack (third review): instantiate before the graph has a host buffer
/// (that exec takes no one-exec slot), add one with a writer, instantiate
/// again, and ask both execs for the buffer: two `&mut` to one memory, or
/// the old exec's slice while the new one's host node writes it. Must
/// happen: the exec from before the buffer is refused naming `host_data`;
/// the new one gets the buffer with what its launch wrote.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn an_exec_from_before_a_host_buffer_cannot_reach_it() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut g = Graph::new(&ctx).unwrap();
    g.add_empty("start", &[]).unwrap();
    let mut before = g.instantiate().unwrap();
    let host = g.add_host_buffer::<u32>(N as usize).unwrap();
    g.add_host_writing(
        "bump",
        &host,
        |d: &mut [u32]| d.iter_mut().for_each(|v| *v += 1),
        &[],
    )
    .unwrap();
    let mut after = g.instantiate().unwrap();
    after.launch(&stream).unwrap();
    let err = before.host_data(&host).unwrap_err();
    assert!(
        matches!(
            err,
            GraphError::Unsupported {
                operation: "host_data",
                what: Unsupported::HostBufferAfterInstantiation,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(after.host_data(&host).unwrap().iter().all(|v| *v == 1));
    before.launch(&stream).unwrap();
    after.synchronize().unwrap();
    before.synchronize().unwrap();
}

/// Attack: copy into a host Vec inside an IF body (a body may run after
/// the launch call returned, or many times), then forget the exec and free
/// the Vec. Must happen: the copy node is refused naming it.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn host_memory_is_refused_inside_conditional_bodies() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut host = vec![0.0f32; N as usize];
    let mut g = Graph::new(&ctx).unwrap();
    let xb = g.bind(&x);
    let go = g.cond_handle(Some(1)).unwrap();
    let mut inner = None;
    let result = g.add_if("maybe", go, &[], |body| {
        inner = Some(body.add_copy("to_host", xb, &mut host, &[]));
        Ok(())
    });
    result.unwrap();
    let err = inner.unwrap().unwrap_err();
    expect_refused!(
        &err,
        GraphError::Unsupported {
            what: Unsupported::HostCopyInBody,
            ..
        },
        "to_host"
    );
}

/// Attack: free a sub-slice of a graph allocation (an interior address).
/// Must happen: refused naming the free node; the whole buffer frees.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_free_of_part_of_an_allocation_is_refused() {
    let ctx = gpu();
    let _lock = graph_memory_lock();
    let mut g = Graph::new(&ctx).unwrap();
    let (alloc, tmp) = g.add_alloc::<f32>("tmp", N as usize, &[]).unwrap();
    let tail = tmp.slice(1..N as usize);
    let err = g.add_free("free_tail", tail, &[alloc]).unwrap_err();
    expect_refused!(
        &err,
        GraphError::Unsupported {
            what: Unsupported::PartialFree { .. },
            ..
        },
        "free_tail"
    );
    g.add_free("free", tmp, &[alloc]).unwrap();
}
