//! Kernel bounds, conditional handles, device-launched execs and host memory
//! of copy nodes.
//!
//! - Bounds: a kernel trusts its `Len` and `Index` arguments, the size of an
//!   `InFirst`/`OutFirst` buffer and one `OutPerBlock` element per block. A
//!   safe caller passing a count past a buffer, an index past it, a buffer
//!   too short for the grid, or an empty one-element buffer is refused, when
//!   the node is added and when an exec's arguments are set.
//! - Handles: a kernel may set only its own graph's handles; two setters of
//!   one handle must be ordered, unless they sit in different arms of one
//!   conditional; an exec update may not hand a kernel another handle.
//! - Device launch: a graph that launches an exec from the device keeps
//!   tracking that exec's buffers, even when its own exec is forgotten.
//! - Host memory: page-locked host memory is refused in copy nodes; pageable
//!   memory is done with when the launch call returns.

use crate::common::{gpu, own_context, sync};
use crate::{expect_foreign, expect_refused};
use graph_runtime::error::{ArgumentRefusal, NodeUpdateRefusal, OrderRule, Unsupported};
use graph_runtime::kernel::KernelDef;
use graph_runtime::GraphError;
use graph_runtime::{Graph, InstantiateOptions, LaunchConfig};

const N: u32 = 1024;

/// Attack: `AddOne` with a count one past its buffer, as a node and as an
/// exec update; `Add` whose shortest buffer is shorter than the count.
/// Must happen: refused naming the node; the legal count runs and is exact.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_count_past_a_buffer_is_refused() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let (add_one, add) = (
        kernels::AddOne::load(&ctx).unwrap(),
        kernels::Add::load(&ctx).unwrap(),
    );
    let short = stream.clone_htod(&vec![1.0f32; N as usize / 2]).unwrap();
    let long = stream.clone_htod(&vec![1.0f32; N as usize]).unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut out = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let cfg = LaunchConfig::for_elements(N + 1, 256);
    {
        let mut g = Graph::new(&ctx).unwrap();
        let (xb, ob) = (g.bind_mut(&mut x), g.bind_mut(&mut out));
        let (sb, lb) = (g.bind(&short), g.bind(&long));
        let err = g
            .add_kernel("past_end", &add_one, cfg, (xb, N + 1), &[])
            .unwrap_err();
        let n = u64::from(N);
        let length_past = |argument, length, elements| ArgumentRefusal::LengthPastBuffer {
            argument,
            length,
            buffer: 0,
            elements,
        };
        expect_refused!(
            &err,
            GraphError::InvalidArguments { reason, .. } if *reason == length_past(1, n + 1, n),
            "past_end"
        );
        let err = g
            .add_kernel("short_input", &add, cfg, (sb, lb, ob, N), &[])
            .unwrap_err();
        expect_refused!(
            &err,
            GraphError::InvalidArguments { reason, .. } if *reason == length_past(3, n, n / 2),
            "short_input"
        );
        // A sub-slice bounds the count too.
        let head = xb.slice(0..16);
        let err = g
            .add_kernel("sliced", &add_one, cfg, (head, 17), &[])
            .unwrap_err();
        expect_refused!(
            &err,
            GraphError::InvalidArguments { reason, .. } if *reason == length_past(1, 17, 16),
            "sliced"
        );
        let k = g.add_kernel("bump", &add_one, cfg, (xb, N), &[]).unwrap();
        let mut exec = g.instantiate().unwrap();
        let err = exec.set_kernel_args(&k, (xb, N + 1)).unwrap_err();
        expect_refused!(
            &err,
            GraphError::InvalidArguments { reason, .. } if *reason == length_past(1, n + 1, n),
            "bump"
        );
        exec.set_kernel_args(&k, (xb, N - 1)).unwrap();
        exec.launch(&stream).unwrap();
        sync(&stream);
    }
    let x = stream.clone_dtoh(&x).unwrap();
    assert!(x[..N as usize - 1].iter().all(|v| *v == 1.0));
    assert_eq!(
        x[N as usize - 1],
        0.0,
        "the element past the count is untouched"
    );
}

/// Attack: `Mark` at an index one past its buffer; `ReducePartial` with a
/// partial buffer shorter than its grid; `CountdownFlag` (one-element
/// buffers) given an empty sub-slice.
/// Must happen: each refused naming the node; the legal ones run.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn an_index_a_grid_or_a_one_element_buffer_past_the_end_is_refused() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let (mark, partial, flag) = (
        kernels::Mark::load(&ctx).unwrap(),
        kernels::ReducePartial::load(&ctx).unwrap(),
        kernels::CountdownFlag::load(&ctx).unwrap(),
    );
    let mut visits = stream.alloc_zeros::<i32>(4).unwrap();
    let x = stream.clone_htod(&vec![1.0f32; N as usize]).unwrap();
    let mut part = stream.alloc_zeros::<f64>(4).unwrap();
    let mut counter = stream.clone_htod(&[3i32]).unwrap();
    let mut go_on = stream.alloc_zeros::<i32>(1).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let (v, xb, p) = (g.bind_mut(&mut visits), g.bind(&x), g.bind_mut(&mut part));
        let (c, f) = (g.bind_mut(&mut counter), g.bind_mut(&mut go_on));
        let one = LaunchConfig::new(1, 1);
        let err = g.add_kernel("slot4", &mark, one, (v, 4), &[]).unwrap_err();
        let index_past = |index| ArgumentRefusal::IndexPastBuffer {
            argument: 1,
            index,
            buffer: 0,
            elements: 4,
        };
        expect_refused!(
            &err,
            GraphError::InvalidArguments { reason, .. } if *reason == index_past(4),
            "slot4"
        );
        let err = g
            .add_kernel(
                "eight_blocks",
                &partial,
                LaunchConfig::new(8, 256),
                (xb, p, N),
                &[],
            )
            .unwrap_err();
        expect_refused!(
            &err,
            GraphError::InvalidArguments {
                reason: ArgumentRefusal::FewerElementsThanBlocks {
                    buffer: 1,
                    elements: 4,
                    blocks: 8
                },
                ..
            },
            "eight_blocks"
        );
        let empty = f.slice(0..0);
        let err = g
            .add_kernel("empty_flag", &flag, one, (c, empty), &[])
            .unwrap_err();
        expect_refused!(
            &err,
            GraphError::InvalidArguments {
                reason: ArgumentRefusal::ShorterThanTouched {
                    buffer: 1,
                    elements: 0,
                    touched: 1
                },
                ..
            },
            "empty_flag"
        );
        let m = g.add_kernel("slot3", &mark, one, (v, 3), &[]).unwrap();
        let r = g
            .add_kernel(
                "four_blocks",
                &partial,
                LaunchConfig::new(4, 256),
                (xb, p, N),
                &[m.node()],
            )
            .unwrap();
        g.add_kernel("step", &flag, one, (c, f), &[r.node()])
            .unwrap();
        let mut exec = g.instantiate().unwrap();
        let err = exec.set_kernel_args(&m, (v, 9)).unwrap_err();
        expect_refused!(
            &err,
            GraphError::InvalidArguments { reason, .. } if *reason == index_past(9),
            "slot3"
        );
        exec.launch(&stream).unwrap();
        sync(&stream);
    }
    assert_eq!(stream.clone_dtoh(&visits).unwrap(), [0, 0, 0, 1]);
    let part = stream.clone_dtoh(&part).unwrap();
    assert_eq!(part.iter().sum::<f64>(), N as f64);
    assert_eq!(stream.clone_dtoh(&counter).unwrap(), [2]);
    assert_eq!(stream.clone_dtoh(&go_on).unwrap(), [1]);
}

/// Attack: a kernel of graph B takes graph A's conditional handle (it
/// faulted with an illegal address when the runtime allowed it).
/// Must happen: refused as a foreign handle naming the node.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_kernel_cannot_set_another_graphs_handle() {
    let ctx = gpu();
    let set = kernels::SetCondition::load(&ctx).unwrap();
    let mut a = Graph::new(&ctx).unwrap();
    let handle = a.cond_handle(Some(0)).unwrap();
    a.add_if("branch", handle, &[], |body| {
        body.add_empty("work", &[]).map(|_| ())
    })
    .unwrap();
    let mut b = Graph::new(&ctx).unwrap();
    let err = b
        .add_kernel("steal", &set, LaunchConfig::new(1, 1), (handle, 1), &[])
        .unwrap_err();
    expect_foreign(&err, Some("steal"));
    // A graph sharing A's bound buffers is another graph all the same.
    let mut sharing = a.new_sharing().unwrap();
    let err = sharing
        .add_kernel("steal_too", &set, LaunchConfig::new(1, 1), (handle, 1), &[])
        .unwrap_err();
    expect_foreign(&err, Some("steal_too"));
}

/// Attack: two kernels set one handle with no edge between them (CUDA
/// leaves concurrent sets undefined); one beside a WHILE loop whose body
/// sets its handle; an exec update handing a setter another handle.
/// Must happen: refused naming the second setter; ordered setters and
/// setters in the two arms of one IF/ELSE are accepted and run.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn unordered_setters_of_one_handle_are_refused() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let (set, step, mark) = (
        kernels::SetCondition::load(&ctx).unwrap(),
        kernels::CountdownStep::load(&ctx).unwrap(),
        kernels::Mark::load(&ctx).unwrap(),
    );
    let one = LaunchConfig::new(1, 1);
    let mut counter = stream.clone_htod(&[5i32]).unwrap();
    let mut visits = stream.alloc_zeros::<i32>(4).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let (c, v) = (g.bind_mut(&mut counter), g.bind_mut(&mut visits));
        let go = g.cond_handle(None).unwrap();
        let first = g.add_kernel("first", &set, one, (go, 0), &[]).unwrap();
        let err = g.add_kernel("racer", &set, one, (go, 1), &[]).unwrap_err();
        expect_refused!(
            &err,
            GraphError::Unordered { rule: OrderRule::HandleSetters { other }, .. } if other == "first",
            "racer"
        );
        let second = g
            .add_kernel("second", &set, one, (go, 1), &[first.node()])
            .unwrap();
        let branch = g
            .add_if_else(
                "branch",
                go,
                &[second.node()],
                |then| then.add_kernel("then", &mark, one, (v, 0), &[]).map(|_| ()),
                |other| {
                    other
                        .add_kernel("else", &mark, one, (v, 1), &[])
                        .map(|_| ())
                },
            )
            .unwrap();
        // A WHILE whose body sets its handle, and a kernel beside it that
        // sets it too.
        let more = g.cond_handle(Some(1)).unwrap();
        g.add_while("spin", more, &[branch], |body| {
            body.add_kernel("count", &step, one, (more, c), &[])
                .map(|_| ())
        })
        .unwrap();
        let err = g
            .add_kernel("beside", &set, one, (more, 0), &[branch])
            .unwrap_err();
        expect_refused!(
            &err,
            GraphError::Unordered {
                rule: OrderRule::HandleSetters { .. },
                ..
            },
            "beside"
        );
        // Setters in two arms of one IF/ELSE never run together.
        let pick = g.cond_handle(Some(1)).unwrap();
        g.add_if_else(
            "pick",
            pick,
            &[branch],
            |then| {
                then.add_kernel("set_a", &set, one, (pick, 0), &[])
                    .map(|_| ())
            },
            |other| {
                other
                    .add_kernel("set_b", &set, one, (pick, 0), &[])
                    .map(|_| ())
            },
        )
        .unwrap();
        let mut exec = g.instantiate().unwrap();
        // The exec cannot make `first` set another handle.
        let err = exec.set_kernel_args(&first, (more, 0)).unwrap_err();
        expect_refused!(
            &err,
            GraphError::NodeUpdateRefused {
                reason: NodeUpdateRefusal::OtherConditionalHandles,
                ..
            },
            "first"
        );
        exec.set_kernel_args(&first, (go, 0)).unwrap();
        exec.launch(&stream).unwrap();
        sync(&stream);
    }
    assert_eq!(stream.clone_dtoh(&visits).unwrap(), [1, 0, 0, 0]);
    assert_eq!(stream.clone_dtoh(&counter).unwrap(), [0]);
}

/// Attack: a launcher graph tail-launches a device exec 3 times; the
/// launcher's own exec is forgotten (`mem::forget` ends its borrows without
/// running its drop), then the target exec is dropped and its buffer read
/// on another stream at once.
/// Must happen: the launcher tracked the target's buffer at its launches, so
/// cudarc orders the read after them: the read sees all three launches.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_forgotten_launcher_still_orders_the_device_launched_execs_buffers() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let reader = ctx.new_stream().unwrap();
    let (add_one, launch, slow) = (
        kernels::AddOne::load(&ctx).unwrap(),
        kernels::LaunchGraph::load(&ctx).unwrap(),
        kernels::SlowFill::load(&ctx).unwrap(),
    );
    let device = InstantiateOptions::default().device_launch(true);
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut pad = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut target = Graph::new(&ctx).unwrap();
        let xb = target.bind_mut(&mut x);
        target
            .add_kernel(
                "bump",
                &add_one,
                LaunchConfig::for_elements(N, 256),
                (xb, N),
                &[],
            )
            .unwrap();
        let mut target_exec = target.instantiate_with(&device).unwrap();
        target_exec.upload(&stream).unwrap();
        sync(&stream);
        {
            let mut launcher = Graph::new(&ctx).unwrap();
            let pb = launcher.bind_mut(&mut pad);
            // A slow kernel first, so the launches are still running when
            // the reader asks.
            let s = launcher
                .add_kernel(
                    "slow",
                    &slow,
                    LaunchConfig::new(1, 32),
                    (pb, 0.0, 32, 20_000_000),
                    &[],
                )
                .unwrap();
            let handle = target_exec.device_handle().unwrap();
            launcher
                .add_kernel(
                    "tail",
                    &launch,
                    LaunchConfig::new(1, 1),
                    (handle, 0),
                    &[s.node()],
                )
                .unwrap();
            let mut exec = launcher.instantiate_with(&device).unwrap();
            exec.upload(&stream).unwrap();
            for _ in 0..3 {
                exec.launch(&stream).unwrap();
            }
            std::mem::forget(exec);
        }
        drop(target_exec);
    }
    // No synchronize: cudarc's tracking must order this read.
    let x = reader.clone_dtoh(&x).unwrap();
    assert!(
        x.iter().all(|v| *v == 3.0),
        "read before the launches ended: {:?}",
        &x[..4]
    );
}

/// Attack (fifth review): launch a device-launchable exec from the host (a
/// slow kernel), then take its device handle at once: a launcher could
/// then start it on the device while the host launch still runs (an exec
/// must not run twice at once).
///
/// Must happen: `device_handle` returns only once the host launch is done
/// (the stream is idle when it returns).
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_device_handle_waits_for_the_host_launch() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let slow = kernels::SlowFill::load(&ctx).unwrap();
    let mut pad = stream.alloc_zeros::<f32>(32).unwrap();
    let device = InstantiateOptions::default().device_launch(true);
    let mut target = Graph::new(&ctx).unwrap();
    let pb = target.bind_mut(&mut pad);
    target
        .add_kernel(
            "slow",
            &slow,
            LaunchConfig::new(1, 32),
            (pb, 1.0, 32, 50_000_000),
            &[],
        )
        .unwrap();
    let mut exec = target.instantiate_with(&device).unwrap();
    exec.upload(&stream).unwrap();
    exec.launch(&stream).unwrap();
    let _handle = exec.device_handle().unwrap();
    // SAFETY: the stream is live.
    let idle = unsafe { graph_runtime::result::stream_done(stream.cu_stream()) };
    assert_eq!(idle, Ok(true), "the host launch still runs");
    sync(&stream);
}

/// Attack: a copy node into page-locked host memory (copied asynchronously,
/// so a forgotten exec could let it be freed mid-copy).
/// Must happen: refused naming the node; a Vec (pageable) is accepted.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn page_locked_host_memory_is_refused_in_copy_nodes() {
    let ctx = own_context();
    let stream = ctx.new_stream().unwrap();
    let x = stream.clone_htod(&vec![2.0f32; N as usize]).unwrap();
    // SAFETY: page-locked memory, fully written before use below.
    let mut pinned = unsafe { ctx.alloc_pinned::<f32>(N as usize) }.unwrap();
    pinned.as_mut_slice().unwrap().fill(0.0);
    // SAFETY: as above.
    let mut source = unsafe { ctx.alloc_pinned::<f32>(N as usize) }.unwrap();
    source.as_mut_slice().unwrap().fill(1.0);
    let mut pageable = vec![0.0f32; N as usize];
    let mut y = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind(&x);
        let yb = g.bind_mut(&mut y);
        let err = g
            .add_copy("to_pinned", xb, pinned.as_mut_slice().unwrap(), &[])
            .unwrap_err();
        expect_refused!(
            &err,
            GraphError::Unsupported {
                what: Unsupported::PinnedHostCopy,
                ..
            },
            "to_pinned"
        );
        let err = g
            .add_copy("from_pinned", source.as_slice().unwrap(), yb, &[])
            .unwrap_err();
        expect_refused!(
            &err,
            GraphError::Unsupported {
                what: Unsupported::PinnedHostCopy,
                ..
            },
            "from_pinned"
        );
        g.add_copy("to_vec", xb, &mut pageable, &[]).unwrap();
        g.instantiate().unwrap().launch(&stream).unwrap();
        sync(&stream);
    }
    assert!(pageable.iter().all(|v| *v == 2.0));
}

/// What the runtime relies on for pageable host memory in copy nodes: a
/// device-to-host copy into a Vec, after a slow kernel (tens of ms), is
/// complete when `launch` returns, before any synchronize. If the driver
/// returned early, the Vec would still hold zeros here.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_pageable_copy_is_done_when_launch_returns() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let slow = kernels::SlowFill::load(&ctx).unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut host = vec![0.0f32; N as usize];
    // Observed through a raw pointer: the exec borrows the Vec meanwhile.
    let observe = host.as_ptr();
    let mut seen = Vec::new();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        let fill = g
            .add_kernel(
                "slow",
                &slow,
                LaunchConfig::new(4, 256),
                (xb, 7.0, N, 50_000_000),
                &[],
            )
            .unwrap();
        g.add_copy("back", xb, &mut host, &[fill.node()]).unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        for i in 0..N as usize {
            // SAFETY: the Vec is alive and not resized; the graph's copy
            // wrote it (if it is done) on another thread before `launch`
            // returned, which is what this test checks; a racing write
            // would show as zeros, not as undefined behaviour of note in a
            // test of plain f32 memory.
            seen.push(unsafe { std::ptr::read_volatile(observe.add(i)) });
        }
        drop(exec);
    }
    assert!(
        seen.iter().all(|v| *v == 7.0),
        "the copy into pageable memory was not done when launch returned: {:?}",
        &seen[..4]
    );
    assert!(host.iter().all(|v| *v == 7.0));
}
