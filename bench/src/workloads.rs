//! The other workloads: a 1,000-step loop three ways, updates of a 100-node
//! graph, graph memory of disjoint allocations, and the macro's own cost.

use crate::timing::{median, time_us, Result};
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use graph_runtime::memory::{graph_mem_usage, reset_graph_mem_high, trim_graph_memory};
use std::sync::Arc;

cuda_graph! {
    /// Device-side loop: a WHILE node counting down (the C++ loop's kernel:
    /// one decrement, 1 x 32 threads).
    graph WhileLoop(counter: &mut CudaSlice<i32>) {
        cond again = 1;
        repeat: while again {
            step: kernel kernels::CountdownStep<<<1, 32>>>(again, counter);
        }
    }

    /// Device-side loop: the graph tail-launches itself.
    #[device_launch]
    graph TailLoop(counter: &mut CudaSlice<i32>, steps: &mut CudaSlice<i32>) {
        step: kernel kernels::RelaunchCountdown<<<1, 1>>>(counter, steps);
    }

    /// One host-loop step: the flag says whether to go on.
    graph HostStep(counter: &mut CudaSlice<i32>, flag: &mut CudaSlice<i32>) {
        step: kernel kernels::CountdownFlag<<<1, 1>>>(counter, flag);
    }

    /// Eight 64 MiB allocations with disjoint lifetimes, in alloc scopes.
    graph Disjoint(n: u32) {
        alloc a0: f32[n] { w0: kernel kernels::Iota<<<n.div_ceil(256), 256>>>(a0, n); }
        alloc a1: f32[n] { w1: kernel kernels::Iota<<<n.div_ceil(256), 256>>>(a1, n); }
        alloc a2: f32[n] { w2: kernel kernels::Iota<<<n.div_ceil(256), 256>>>(a2, n); }
        alloc a3: f32[n] { w3: kernel kernels::Iota<<<n.div_ceil(256), 256>>>(a3, n); }
        alloc a4: f32[n] { w4: kernel kernels::Iota<<<n.div_ceil(256), 256>>>(a4, n); }
        alloc a5: f32[n] { w5: kernel kernels::Iota<<<n.div_ceil(256), 256>>>(a5, n); }
        alloc a6: f32[n] { w6: kernel kernels::Iota<<<n.div_ceil(256), 256>>>(a6, n); }
        alloc a7: f32[n] { w7: kernel kernels::Iota<<<n.div_ceil(256), 256>>>(a7, n); }
        a0 -> a1 -> a2 -> a3 -> a4 -> a5 -> a6 -> a7;
    }
}

/// Microseconds for `steps` steps: (device WHILE, tail-launch loop, host loop).
pub fn loops(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    steps: i32,
    reps: usize,
) -> Result<(f64, f64, f64)> {
    let mut counter = stream.alloc_zeros::<i32>(1)?;
    let mut other = stream.alloc_zeros::<i32>(1)?;
    let (whiles, tails);
    let mut hosts = Vec::new();
    {
        let graph = WhileLoop::build(ctx, &mut counter)?;
        let bound = graph.bound();
        let mut exec = graph.instantiate()?;
        whiles = device_loop(
            stream,
            bound.counter.device_ptr(),
            steps,
            reps,
            "WHILE",
            || Ok(exec.launch(stream)?),
        )?;
    }
    {
        let graph = TailLoop::build(ctx, &mut counter, &mut other)?;
        let bound = graph.bound();
        let mut exec = graph.instantiate()?;
        exec.upload(stream)?;
        tails = device_loop(
            stream,
            bound.counter.device_ptr(),
            steps,
            reps,
            "tail-launch loop",
            || Ok(exec.launch(stream)?),
        )?;
    }
    {
        let graph = HostStep::build(ctx, &mut counter, &mut other)?;
        let bound = graph.bound();
        let mut exec = graph.instantiate()?;
        for rep in 0..=reps {
            reset(stream, bound.counter.device_ptr(), steps)?;
            let (us, taken) = time_us(|| {
                let mut taken = 0;
                loop {
                    exec.launch(stream)?;
                    let flag = read(stream, bound.flag.device_ptr())?;
                    taken += 1;
                    if flag == 0 {
                        return Ok(taken);
                    }
                }
            })?;
            if taken != steps {
                return Err(format!("host loop ran {taken} steps").into());
            }
            if rep > 0 {
                hosts.push(us);
            }
        }
    }
    Ok((median(whiles), median(tails), median(hosts)))
}

/// Times `reps` runs (after one warm-up) of a loop that runs on the device
/// until the counter at `counter` reaches zero.
fn device_loop(
    stream: &CudaStream,
    counter: u64,
    steps: i32,
    reps: usize,
    what: &str,
    mut launch: impl FnMut() -> Result,
) -> Result<Vec<f64>> {
    let mut samples = Vec::new();
    for rep in 0..=reps {
        reset(stream, counter, steps)?;
        let (us, ()) = time_us(|| {
            launch()?;
            Ok(stream.synchronize()?)
        })?;
        expect_zero(stream, counter, what)?;
        if rep > 0 {
            samples.push(us);
        }
    }
    Ok(samples)
}

/// Writes `value` to a device int (raw: the graph holds the slice's borrow).
fn reset(stream: &CudaStream, ptr: u64, value: i32) -> Result {
    // SAFETY: `ptr` is a live i32 bound to a graph we own; the stream is
    // synchronized before the host value goes away.
    unsafe {
        graph_runtime::cudarc::driver::result::memcpy_htod_async(ptr, &[value], stream.cu_stream())
    }?;
    Ok(stream.synchronize()?)
}

/// Reads a device int after the stream's work (the host loop's flag copy).
fn read(stream: &CudaStream, ptr: u64) -> Result<i32> {
    let mut value = [0i32];
    // SAFETY: as for `reset`.
    unsafe {
        graph_runtime::cudarc::driver::result::memcpy_dtoh_async(
            &mut value,
            ptr,
            stream.cu_stream(),
        )
    }?;
    stream.synchronize()?;
    Ok(value[0])
}

fn expect_zero(stream: &CudaStream, ptr: u64, what: &str) -> Result {
    match read(stream, ptr)? {
        0 => Ok(()),
        left => Err(format!("{what} stopped with {left} steps left").into()),
    }
}

/// Microseconds for one update of the 100-node chain: (one node's arguments
/// through its typed accessor, rebuild + whole-graph update, update alone,
/// re-instantiation).
pub fn updates(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    reps: usize,
) -> Result<(f64, f64, f64, f64)> {
    use graph_bench_shapes::ChainW1L100;
    let mut x = stream.alloc_zeros::<f32>(32)?;
    let graph = ChainW1L100::build(ctx, &mut x)?;
    let bound = graph.bound();
    let mut exec = graph.instantiate()?;
    exec.launch(stream)?;
    let (mut per_node, mut whole, mut update_only, mut reinstantiate) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..reps {
        let n = if i % 2 == 0 { 16u32 } else { 32 };
        per_node.push(time_us(|| Ok(exec.c0_50().set_args((bound.x0, n))?))?.0);
        whole.push(
            time_us(|| {
                let next = graph.rebuild(bound.x0)?;
                Ok(exec.update(&next).map(drop)?)
            })?
            .0,
        );
        let next = graph.rebuild(bound.x0)?;
        update_only.push(time_us(|| Ok(exec.update(&next).map(drop)?))?.0);
        reinstantiate.push(time_us(|| Ok(next.instantiate().map(drop)?))?.0);
    }
    exec.launch(stream)?;
    stream.synchronize()?;
    Ok((
        median(per_node),
        median(whole),
        median(update_only),
        median(reinstantiate),
    ))
}

/// Bytes of graph memory reserved by eight disjoint 64 MiB allocations.
pub fn disjoint_reserved(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>) -> Result<u64> {
    let n = (64u32 << 20) / 4;
    ctx.synchronize()?;
    trim_graph_memory(ctx)?;
    reset_graph_mem_high(ctx)?;
    let before = graph_mem_usage(ctx)?.reserved_current;
    {
        let graph = Disjoint::build(ctx, n)?;
        let mut exec = graph.instantiate()?;
        exec.launch(stream)?;
        stream.synchronize()?;
    }
    Ok(graph_mem_usage(ctx)?.reserved_high.saturating_sub(before))
}

/// Milliseconds the macro takes (parse + check + expand) for synthetic
/// graphs of `nodes` nodes with allocations, scopes and conditionals.
pub fn macro_time(nodes: usize, reps: usize) -> f64 {
    let source = graph_macros_core::synthetic::graph_source(nodes / 10);
    let samples = (0..reps)
        .map(|_| {
            let tokens: proc_macro2::TokenStream = source.parse().unwrap_or_default();
            let start = std::time::Instant::now();
            let out = graph_macros_core::expand(tokens);
            let ms = start.elapsed().as_secs_f64() * 1e3;
            assert!(!out.is_empty());
            ms
        })
        .collect();
    median(samples)
}
