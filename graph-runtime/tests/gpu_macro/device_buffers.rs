//! Device buffers the graph owns (`buffer name: T[len];`) through the
//! macro: the exec's accessors, and a rebuild that keeps them.

use crate::common::gpu;
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    /// Device buffers the graph owns: bumped by kernels, copied out, read
    /// and written between launches through the exec.
    pub graph OwnedCounter(out: &mut CudaSlice<f32>, n: u32) {
        buffer acc: f32[n];
        buffer twice: f32[n];
        bump: kernel kernels::AddOne<<<n.div_ceil(256), 256>>>(acc, n);
        copy_up: copy acc => twice;
        double: kernel kernels::Scale<<<n.div_ceil(256), 256>>>(twice, 2.0f32, n);
        emit: copy twice => out;
        bump -> copy_up -> double -> emit;
    }
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn device_buffers_live_with_the_graph_and_survive_a_rebuild() {
    const N: u32 = 1000;
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut out = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let graph = OwnedCounter::build(&ctx, &mut out, N).unwrap();
    let mut exec = graph.instantiate().unwrap();
    for _ in 0..5 {
        exec.launch(&stream).unwrap();
    }
    let acc = exec.acc().unwrap().to_host().unwrap();
    assert!(acc.iter().all(|v| *v == 5.0), "{:?}", &acc[..4]);
    exec.acc()
        .unwrap()
        .write(&vec![10.0f32; N as usize])
        .unwrap();
    exec.launch(&stream).unwrap();
    let twice = exec.twice().unwrap().to_host().unwrap();
    assert!(twice.iter().all(|v| *v == 22.0), "{:?}", &twice[..4]);
    // A rebuild shares the buffers: the update keeps their contents.
    let bound = graph.bound();
    let again = graph.rebuild(bound.out, N).unwrap();
    assert_eq!(again.bound().acc.device_ptr(), bound.acc.device_ptr());
    exec.update(&again).unwrap();
    exec.launch(&stream).unwrap();
    exec.synchronize().unwrap();
    drop(exec);
    drop((graph, again));
    let seen = stream.clone_dtoh(&out).unwrap();
    assert!(seen.iter().all(|v| *v == 24.0), "{:?}", &seen[..4]);
}
