//! GPU tests of host memory declared in `cuda_graph!` (`host name:
//! T[len];`): copies into and out of it, host nodes reading it, the exec's
//! accessors, and the memory of other builds, clones and rebuilds.
//! Ignored unless asked for (`cargo test -- --include-ignored`).

use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;
use std::sync::Arc;

#[path = "gpu_runtime/common.rs"]
#[allow(dead_code)]
mod common;
use common::gpu;

const N: u32 = 4096;

cuda_graph! {
    /// Host memory the graph owns: the program writes `src` between
    /// launches, a copy sends it up, a kernel bumps it, a copy brings it
    /// back into `seen`, and a host node sums that into `sums`.
    graph HostRoundTrip(x: &mut CudaSlice<f32>, sums: Arc<std::sync::Mutex<Vec<f64>>>, n: u32) {
        host src: f32[n];
        host seen: f32[n];
        up: copy src => x;
        bump: kernel kernels::AddOne<<<n.div_ceil(256), 256>>>(x, n);
        down: copy x => seen;
        sum: host move |seen: &[f32]| {
            sums.lock().unwrap().push(seen.iter().map(|v| f64::from(*v)).sum());
        };
        up -> bump -> down -> sum;
    }
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn host_buffers_declared_in_the_dsl_round_trip() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let sums = Arc::new(std::sync::Mutex::new(Vec::new()));
    let graph = HostRoundTrip::build(&ctx, &mut x, sums.clone(), N).unwrap();
    let src = graph.bound().src;
    assert_eq!(src.len(), N as usize);
    let mut exec = graph.instantiate().unwrap();
    for round in 0..50u32 {
        // Written between launches; the launch's copy sends it up.
        for (i, v) in exec.src().unwrap().iter_mut().enumerate() {
            *v = (i as u32 % 7 + round) as f32;
        }
        exec.launch(&stream).unwrap();
    }
    exec.synchronize().unwrap();
    let expected = |round: u32| -> f64 { (0..N).map(|i| f64::from(i % 7 + round + 1)).sum() };
    let sums = sums.lock().unwrap().clone();
    assert_eq!(sums.len(), 50);
    for (round, sum) in sums.iter().enumerate() {
        assert_eq!(*sum, expected(round as u32), "round {round}");
    }
    // The last launch's copy, read through the exec.
    let seen = exec.seen().unwrap();
    assert!(seen
        .iter()
        .enumerate()
        .all(|(i, v)| *v == (i as u32 % 7 + 50) as f32));
}

/// Two builds of one graph with host buffers, and a clone: each has its
/// own host memory and its own live exec; `update` from a rebuild
/// re-instantiates onto the rebuilt graph's memory.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn host_buffers_of_two_builds_are_their_own() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut x1 = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut x2 = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let (sums1, sums2) = (
        Arc::new(std::sync::Mutex::new(Vec::new())),
        Arc::new(std::sync::Mutex::new(Vec::new())),
    );
    let g1 = HostRoundTrip::build(&ctx, &mut x1, sums1.clone(), N).unwrap();
    let g2 = HostRoundTrip::build(&ctx, &mut x2, sums2.clone(), N).unwrap();
    let clone = g1.graph().try_clone().unwrap();
    let (mut e1, mut e2) = (g1.instantiate().unwrap(), g2.instantiate().unwrap());
    // A clone has host memory of its own, so an exec of its own.
    let clone_src = clone.host_buffer(&g1.bound().src).unwrap();
    let mut e3 = clone.instantiate().unwrap();
    e3.host_data(&clone_src).unwrap().fill(6.0);
    e1.src().unwrap().fill(1.0);
    e2.src().unwrap().fill(2.0);
    e1.launch(&stream).unwrap();
    e2.launch(&stream).unwrap();
    e1.synchronize().unwrap();
    e2.synchronize().unwrap();
    assert_eq!(*sums1.lock().unwrap(), [f64::from(N) * 2.0]);
    assert_eq!(*sums2.lock().unwrap(), [f64::from(N) * 3.0]);
    // The clone's host node sums into the same `sums1` (its closure is the
    // original's), from its own memory.
    e3.launch(&stream).unwrap();
    e3.synchronize().unwrap();
    assert_eq!(sums1.lock().unwrap().last(), Some(&(f64::from(N) * 7.0)));
    assert!(e1.src().unwrap().iter().all(|v| *v == 1.0));
    drop(e3);
    // A rebuild has new host memory: the update re-instantiates onto it.
    let rebuilt = g1.rebuild(g1.bound().x, sums1.clone(), N).unwrap();
    let outcome = e1.update(&rebuilt).unwrap();
    assert!(
        matches!(outcome, graph_runtime::UpdateOutcome::Reinstantiated { .. }),
        "{outcome:?}"
    );
    assert!(
        e1.src().unwrap().iter().all(|v| *v == 0.0),
        "the rebuilt graph's memory"
    );
    e1.src().unwrap().fill(4.0);
    e1.launch(&stream).unwrap();
    e1.synchronize().unwrap();
    assert_eq!(sums1.lock().unwrap().last(), Some(&(f64::from(N) * 5.0)));
}
