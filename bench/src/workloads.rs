//! The other workloads: a 1,000-step loop several ways, updates of a 100-node
//! graph, graph memory of disjoint allocations, and the macro's own cost.

use crate::cpp::CppLib;
use crate::timing::{median, paired_median, time_us, Result};
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DeviceRepr};
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

/// The loop variants, in the order of [`LoopTimes::medians`]. (Runs 10-17
/// also timed the macro's WHILE with nvcc's body kernel and a WHILE built
/// with raw driver calls, to find why WHILE execs ran at two speeds: exec
/// placement, see BENCHMARKS.md, "Loops". Those variants are gone; their
/// findings stay there.)
pub const LOOP_VARIANTS: [&str; 5] = [
    "device WHILE (macro)",
    "tail-launch self-loop",
    "host loop",
    "C++ WHILE",
    "C++ host loop",
];

/// The variants of [`LOOP_VARIANTS`] that compare: the host loop over the
/// WHILE, ours and C++'s (`(host, WHILE)` indices).
pub const HOST_OVER_WHILE: [(usize, usize); 2] = [(2, 0), (4, 3)];

/// The WHILE variants of [`LOOP_VARIANTS`]: one exec per slot each.
const WHILE_VARIANTS: [usize; 2] = [0, 3];

/// Microseconds per run of `steps` steps for each of [`LOOP_VARIANTS`]
/// (NaN where a variant needs the C++ library and there is none).
#[derive(Debug)]
pub struct LoopTimes {
    pub samples: Vec<Vec<f64>>,
    /// The slot each round used.
    pub slots: Vec<usize>,
    /// The macro's WHILE graph in the driver's verbose DOT.
    pub dot: String,
}

impl LoopTimes {
    pub fn medians(&self) -> Vec<f64> {
        self.samples.iter().map(|s| median(s.clone())).collect()
    }

    /// Median over rounds of `a`'s time over `b`'s in the same round.
    pub fn paired_ratio(&self, a: usize, b: usize) -> f64 {
        paired_median(&self.samples[a], &self.samples[b], |x, y| x / y)
    }

    /// Each WHILE variant's median per slot (us per step), in creation
    /// order: where the driver placed each exec.
    pub fn per_slot(&self, steps: i32) -> String {
        let mut out = String::new();
        for v in WHILE_VARIANTS {
            let per_slot: Vec<String> = (0..LOOP_EXECS)
                .map(|slot| {
                    let times: Vec<f64> = self.samples[v]
                        .iter()
                        .zip(&self.slots)
                        .filter(|(_, s)| **s == slot)
                        .map(|(t, _)| t / f64::from(steps))
                        .collect();
                    format!("{:.2}", median(times))
                })
                .collect();
            out.push_str(&format!(
                "loop exec per slot, {}: us/step [{}]\n",
                LOOP_VARIANTS[v],
                per_slot.join(", ")
            ));
        }
        out
    }
}

/// Slots of WHILE execs. Identical WHILE execs run at one of two speeds
/// (about 3.9 or 4.5 us per step on the H200) depending on where the driver
/// places them, which follows creation order in runs of a few execs
/// (BENCHMARKS.md, "Loops"). So every WHILE variant gets one exec (and
/// counter) per slot, the slot's execs are created one after another, and
/// each round runs every variant on the same slot: a round's ratios compare
/// execs created side by side.
pub const LOOP_EXECS: usize = 6;

/// `reps` rounds (after `LOOP_EXECS` warm-up rounds) of one run of every loop
/// variant, the order rotating from round to round so that drift cancels
/// out of the ratios, and the WHILE execs' slot too (see [`LOOP_EXECS`]).
pub fn loops(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    cpp: Option<&CppLib>,
    steps: i32,
    reps: usize,
) -> Result<LoopTimes> {
    let ints = |n: usize| {
        (0..n)
            .map(|_| stream.alloc_zeros::<i32>(1))
            .collect::<std::result::Result<Vec<_>, _>>()
    };
    let mut c_macro = ints(LOOP_EXECS)?;
    let (c_cpp, o_cpp) = (ints(LOOP_EXECS)?, ints(LOOP_EXECS)?);
    let (mut c_tail, mut c_host) = (stream.alloc_zeros::<i32>(1)?, stream.alloc_zeros::<i32>(1)?);
    let (mut o_tail, mut o_host) = (stream.alloc_zeros::<i32>(1)?, stream.alloc_zeros::<i32>(1)?);
    stream.synchronize()?;

    // Each slot's execs, created one after another.
    let (mut whiles, mut cpp_loops) = (Vec::new(), Vec::new());
    let mut dot = String::new();
    let slots = c_macro.iter_mut().zip(c_cpp.iter().zip(&o_cpp));
    for (c_macro, (c_cpp, o_cpp)) in slots {
        let graph = WhileLoop::build(ctx, c_macro)?;
        if dot.is_empty() {
            dot = graph.graph().dot()?;
        }
        let ptr = graph.bound().counter.device_ptr();
        whiles.push((graph.instantiate()?, ptr));
        if let Some(lib) = cpp {
            cpp_loops.push(lib.new_loop(raw_ptr(c_cpp, stream), raw_ptr(o_cpp, stream))?);
        }
    }
    let tail_graph = TailLoop::build(ctx, &mut c_tail, &mut o_tail)?;
    let tail_counter = tail_graph.bound().counter.device_ptr();
    let mut tail_exec = tail_graph.instantiate()?;
    tail_exec.upload(stream)?;
    let host_graph = HostStep::build(ctx, &mut c_host, &mut o_host)?;
    let host_bound = host_graph.bound();
    let mut host_exec = host_graph.instantiate()?;

    let mut samples = vec![Vec::new(); LOOP_VARIANTS.len()];
    let mut used_slots = Vec::new();
    // The first rounds warm every exec up.
    for round in 0..reps + LOOP_EXECS {
        let slot = round % LOOP_EXECS;
        let mut times = [f64::NAN; LOOP_VARIANTS.len()];
        // The C++ library runs both of its loops in one call: 4 steps.
        for k in 0..4 {
            match (k + round) % 4 {
                0 => {
                    let (exec, counter) = &mut whiles[slot];
                    times[0] =
                        device_loop(
                            stream,
                            *counter,
                            steps,
                            "WHILE",
                            || Ok(exec.launch(stream)?),
                        )?;
                }
                1 => {
                    times[1] = device_loop(stream, tail_counter, steps, "tail-launch loop", || {
                        Ok(tail_exec.launch(stream)?)
                    })?
                }
                2 => {
                    reset(stream, host_bound.counter.device_ptr(), steps)?;
                    let (us, taken) = time_us(|| {
                        let mut taken = 0;
                        loop {
                            host_exec.launch(stream)?;
                            let flag = read(stream, host_bound.flag.device_ptr())?;
                            taken += 1;
                            if flag == 0 {
                                return Ok(taken);
                            }
                        }
                    })?;
                    if taken != steps {
                        return Err(format!("host loop ran {taken} steps").into());
                    }
                    times[2] = us;
                }
                _ => {
                    if let Some(cpp_loop) = cpp_loops.get_mut(slot) {
                        (times[3], times[4]) = cpp_loop.run(steps)?;
                    }
                }
            }
        }
        if round >= LOOP_EXECS {
            for (sample, time) in samples.iter_mut().zip(times) {
                sample.push(time);
            }
            used_slots.push(slot);
        }
    }
    Ok(LoopTimes {
        samples,
        slots: used_slots,
        dot,
    })
}

/// Microseconds for one run of a loop that runs on the device until the
/// counter at `counter` reaches zero (checked).
fn device_loop(
    stream: &CudaStream,
    counter: u64,
    steps: i32,
    what: &str,
    launch: impl FnOnce() -> Result,
) -> Result<f64> {
    reset(stream, counter, steps)?;
    let (us, ()) = time_us(|| {
        launch()?;
        Ok(stream.synchronize()?)
    })?;
    expect_zero(stream, counter, what)?;
    Ok(us)
}

/// The device address of a slice that stays unbound (for the C++ loop).
fn raw_ptr(slice: &CudaSlice<i32>, stream: &CudaStream) -> u64 {
    let (ptr, guard) = DevicePtr::device_ptr(slice, stream);
    drop(guard);
    ptr
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

/// Reads `len` values at device address `ptr` after the stream's work.
fn read_values<T: DeviceRepr + Default + Clone>(
    stream: &CudaStream,
    ptr: u64,
    len: usize,
) -> Result<Vec<T>> {
    let mut values = vec![T::default(); len];
    // SAFETY: `ptr` holds `len` values of T bound to a graph we own; the
    // stream is synchronized before `values` is read.
    unsafe {
        graph_runtime::cudarc::driver::result::memcpy_dtoh_async(
            &mut values,
            ptr,
            stream.cu_stream(),
        )
    }?;
    stream.synchronize()?;
    Ok(values)
}

/// Reads a device int after the stream's work (the host loop's flag copy).
fn read(stream: &CudaStream, ptr: u64) -> Result<i32> {
    Ok(read_values::<i32>(stream, ptr, 1)?[0])
}

fn expect_zero(stream: &CudaStream, ptr: u64, what: &str) -> Result {
    match read(stream, ptr)? {
        0 => Ok(()),
        left => Err(format!("{what} stopped with {left} steps left").into()),
    }
}

/// Microseconds for one update of the 100-node chain (medians of `reps`).
#[derive(Debug, Clone, Copy)]
pub struct UpdateTimes {
    /// One node's arguments through its typed accessor, in a loop that
    /// launches the exec between updates (as a program updating a
    /// parameter per launch does).
    pub per_node: f64,
    /// The same through the raw driver call alone
    /// (`cuGraphExecKernelNodeSetParams` on a raw graph of the same chain),
    /// interleaved with ours.
    pub per_node_raw: f64,
    /// The median of the per-update ratios, ours : raw.
    pub per_node_ratio: f64,
    /// The same, right after a rebuild, an update and an instantiation
    /// (caches cold for the driver's exec data).
    pub per_node_cold: f64,
    /// A rebuild of the graph then a whole-graph update.
    pub rebuild_update: f64,
    /// The whole-graph update alone.
    pub update: f64,
    /// A new instantiation.
    pub reinstantiate: f64,
}

pub fn updates(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    reps: usize,
) -> Result<UpdateTimes> {
    use crate::chains::Chains;
    let mut xs = [stream.alloc_zeros::<f32>(32)?];
    let raw_x = stream.alloc_zeros::<f32>(32)?;
    let raw = crate::scaling::RawChain::new(ctx, stream, &raw_x, 100)?;
    let graph = Chains::build(ctx, &mut xs, 100)?;
    let bound = graph.bound();
    let x0 = bound.xs[0];
    let mut exec = graph.instantiate()?;
    exec.launch(stream)?;
    raw.launch(stream)?;
    let (mut per_node, mut per_node_raw) = (Vec::new(), Vec::new());
    for i in 0..reps {
        let n = if i % 2 == 0 { 16u32 } else { 32 };
        exec.launch(stream)?;
        stream.synchronize()?;
        per_node.push(time_us(|| Ok(exec.step(0, 50).set_args((x0, n))?))?.0);
        raw.launch(stream)?;
        stream.synchronize()?;
        per_node_raw.push(time_us(|| raw.set_count(50, n))?.0);
    }
    // Check that the updates reached the device: 1 + reps launches of 100
    // kernels, of which those after an update to n = 16 (every other one)
    // skipped elements 16.. in node c0_50.
    stream.synchronize()?;
    let values = read_values::<f32>(stream, x0.device_ptr(), 32)?;
    let launches = 1 + reps as u32;
    let (full, partial) = (
        (launches * 100) as f32,
        (launches * 100 - reps as u32 / 2) as f32,
    );
    let raw_values = read_values::<f32>(stream, crate::scaling::device_ptr(&raw_x, stream), 32)?;
    for (what, values) in [("ours", &values), ("raw", &raw_values)] {
        if values[..16].iter().any(|&v| v != full) || values[16..].iter().any(|&v| v != partial) {
            return Err(format!(
                "per-node updates ({what}): expected {full} below element 16 and {partial} above, got {values:?}"
            )
            .into());
        }
    }
    let (mut per_node_cold, mut whole, mut update_only, mut reinstantiate) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..reps {
        let n = if i % 2 == 0 { 16u32 } else { 32 };
        per_node_cold.push(time_us(|| Ok(exec.step(0, 50).set_args((x0, n))?))?.0);
        whole.push(
            time_us(|| {
                let next = graph.rebuild(&[x0], 100)?;
                Ok(exec.update(&next).map(drop)?)
            })?
            .0,
        );
        let next = graph.rebuild(&[x0], 100)?;
        update_only.push(time_us(|| Ok(exec.update(&next).map(drop)?))?.0);
        reinstantiate.push(time_us(|| Ok(next.instantiate().map(drop)?))?.0);
    }
    drop(raw);
    Ok(UpdateTimes {
        per_node_ratio: paired_median(&per_node, &per_node_raw, |a, b| a / b),
        per_node_raw: median(per_node_raw),
        per_node: median(per_node),
        per_node_cold: median(per_node_cold),
        rebuild_update: median(whole),
        update: median(update_only),
        reinstantiate: median(reinstantiate),
    })
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
