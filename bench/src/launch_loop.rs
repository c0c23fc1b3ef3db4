//! The launch loop of real programs, against the same loop in C++: launch,
//! read a value back from a bound buffer, decide, relaunch, with the exec
//! alive throughout; with cudarc's event tracking on (the default) and off;
//! plain, with a per-node update before each launch, and with a rebuild and
//! a whole-graph update before each launch. Plus the Jacobi solver of
//! examples/jacobi.rs: time to solution of its host loop and of its device
//! WHILE, against the same algorithm in C++.

#[path = "../../examples/jacobi_graphs.rs"]
mod jacobi_graphs;

use crate::cpp::{CppLib, JacobiBuffers};
use crate::timing::{median, Result};
use graph_runtime::cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use graph_runtime::kernel::KernelDef;
use graph_runtime::{Graph, LaunchConfig};
use jacobi_graphs::{JacobiSolve, JacobiStep};
use std::sync::Arc;
use std::time::Instant;

/// Bound buffers per graph (one kernel node each).
pub const BUFFERS: [usize; 3] = [1, 4, 16];
/// The index in [`MODES`] of the rebuild + whole-graph update.
pub const REBUILD: usize = 2;
/// What happens before each launch.
pub const MODES: [&str; 3] = [
    "launch",
    "per-node update + launch",
    "rebuild + whole-graph update + launch",
];
/// Interleaved rounds per row: 31, not 15, for steadier medians on a
/// shared host (15 rounds took the whole table about 10 s on the H200).
const ROUNDS: usize = 31;
const ITERS: usize = 41;

/// One row: medians of per-iteration us, and the median of per-round ratios.
#[derive(Debug, Clone, Copy)]
pub struct LoopRow {
    pub tracking: bool,
    /// The buffers are the graph's own (`Graph::add_buffer`), not bound
    /// cudarc slices.
    pub owned: bool,
    pub buffers: usize,
    pub mode: usize,
    pub rust_us: f64,
    pub cpp_us: f64,
    pub ratio: f64,
}

/// The raw address of a slice, for the C++ side (its use on `stream` is
/// recorded by cudarc).
fn ptr<T>(slice: &CudaSlice<T>, stream: &CudaStream) -> u64 {
    let (ptr, _record) = slice.device_ptr(stream);
    ptr
}

/// Every row, with tracking on then off (the context's setting is restored
/// to off, the rest of the benchmark's).
pub fn launch_loops(ctx: &Arc<CudaContext>, cpp: &CppLib) -> Result<Vec<LoopRow>> {
    let mut rows = Vec::new();
    for tracking in [true, false] {
        // SAFETY: tracking is a per-slice property fixed at allocation; the
        // slices below are used only by this loop, and every iteration
        // synchronizes before the next (C++'s and ours alike).
        unsafe {
            if tracking {
                ctx.enable_event_tracking();
            } else {
                ctx.disable_event_tracking();
            }
        }
        let stream = ctx.new_stream()?;
        let mut bufs = (0..16)
            .map(|_| stream.alloc_zeros::<f32>(32))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        // Graph-owned buffers are not cudarc's: measured with tracking on only.
        let kinds: &[bool] = if tracking { &[false, true] } else { &[false] };
        for &owned in kinds {
            for width in BUFFERS {
                let bufs = &mut bufs[..width];
                rows.extend(loops_of(ctx, &stream, cpp, bufs, tracking, owned)?);
            }
        }
        // SAFETY: as above; the slices are dropped before the tracking mode
        // changes again at the end.
        drop(bufs);
        stream.synchronize()?;
    }
    // SAFETY: the rest of the benchmark allocated its slices with tracking off.
    unsafe { ctx.disable_event_tracking() };
    Ok(rows)
}

fn loops_of(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    cpp: &CppLib,
    bufs: &mut [CudaSlice<f32>],
    tracking: bool,
    owned: bool,
) -> Result<Vec<LoopRow>> {
    let width = bufs.len();
    // Earlier rows launched on these buffers too: start the count at zero.
    for b in bufs.iter_mut() {
        stream.memset_zeros(b)?;
    }
    let ptrs: Vec<u64> = bufs.iter().map(|b| ptr(b, stream)).collect();
    let add_one = kernels::AddOne::load(ctx)?;
    let config = LaunchConfig::new(1, 32);
    let mut g = Graph::new(ctx)?;
    // Our side's buffers: the C++ side's slices bound, or as many of the
    // graph's own (then each side counts its own launches).
    let bound: Vec<_> = match owned {
        false => bufs.iter_mut().map(|b| g.bind_mut(b)).collect(),
        true => (0..width)
            .map(|_| g.add_buffer::<f32>(32))
            .collect::<graph_runtime::Result<Vec<_>>>()?,
    };
    let mut ours_count = 0.0f32;
    let mut nodes = Vec::new();
    for b in &bound {
        nodes.push(g.add_kernel("add_one", &add_one, config, (*b, 32u32), &[])?);
    }
    let mut exec = g.instantiate()?;
    exec.upload(stream)?;
    let mut cpp_exec = cpp.new_exec(width, 1, &ptrs)?;
    // The value of bufs[0][0]: every launch of either side adds one.
    let mut count = 0.0f32;
    let head = bound[0].try_slice(0..1).ok_or("an empty buffer")?;
    let mut rows = Vec::new();
    for (mode, _) in MODES.iter().enumerate() {
        let (mut rust, mut native, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..ROUNDS {
            let mut ours = |count: &mut f32, ours_count: &mut f32| -> Result<Vec<f64>> {
                let mut us = Vec::with_capacity(ITERS);
                for _ in 0..ITERS {
                    let start = Instant::now();
                    match mode {
                        1 => exec.set_kernel_args(&nodes[0], (bound[0], 32u32))?,
                        2 => {
                            let mut rebuilt = g.new_sharing()?;
                            for b in &bound {
                                rebuilt.add_kernel(
                                    "add_one",
                                    &add_one,
                                    config,
                                    (*b, 32u32),
                                    &[],
                                )?;
                            }
                            exec.update(&rebuilt)?;
                        }
                        _ => {}
                    }
                    // The graph's own buffers are read on the exec's own
                    // stream, as C++ reads on its launch stream.
                    match owned {
                        false => exec.launch(stream)?,
                        true => exec.launch_on_own_stream()?,
                    }
                    let value = match owned {
                        false => stream.clone_dtoh(&exec.bound_mut(head)?.view())?[0],
                        true => {
                            let mut value = [0.0f32];
                            exec.buffer(head)?.copy_to_host(&mut value)?;
                            value[0]
                        }
                    };
                    us.push(start.elapsed().as_secs_f64() * 1e6);
                    let expected = match owned {
                        false => &mut *count,
                        true => &mut *ours_count,
                    };
                    *expected += 1.0;
                    if value != *expected {
                        return Err(format!("launch loop read {value}, not {expected}").into());
                    }
                }
                Ok(us)
            };
            let (r, c) = if round % 2 == 0 {
                let r = ours(&mut count, &mut ours_count)?;
                let c = cpp_exec.launch_loop(&ptrs, mode as u32, ITERS, count)?;
                count += ITERS as f32;
                (r, c)
            } else {
                let c = cpp_exec.launch_loop(&ptrs, mode as u32, ITERS, count)?;
                count += ITERS as f32;
                (ours(&mut count, &mut ours_count)?, c)
            };
            let (mr, mc) = (median(r.clone()), median(c.clone()));
            ratios.push(mr / mc);
            rust.extend(r);
            native.extend(c);
        }
        rows.push(LoopRow {
            tracking,
            owned,
            buffers: width,
            mode,
            rust_us: median(rust),
            cpp_us: median(native),
            ratio: median(ratios),
        });
    }
    Ok(rows)
}

/// The solver variants, in [`SolverTimes::us`]'s order.
pub const SOLVER_VARIANTS: [&str; 4] = ["host loop", "device WHILE", "C++ host loop", "C++ WHILE"];

/// Time to solution (us) of each variant per round, and the steps each took.
#[derive(Debug)]
pub struct SolverTimes {
    pub n: u32,
    pub tolerance: f64,
    pub us: [Vec<f64>; 4],
    pub steps: [u32; 4],
}

/// Solves examples/jacobi.rs's problem (n x n, tolerance) `rounds` times
/// with each variant, in an order that rotates. The Rust side runs with
/// cudarc's event tracking on (a context of one stream, as in the example).
pub fn solver(
    ctx: &Arc<CudaContext>,
    cpp: &CppLib,
    n: u32,
    tolerance: f64,
    rounds: usize,
) -> Result<SolverTimes> {
    let problem = kernels::jacobi::Problem { n };
    let (width, len, h2) = (n, problem.len() as u32, problem.h2());
    let (tol2, limit) = (tolerance * tolerance, 1_000_000u32);
    let stream = ctx.new_stream()?;
    let f = stream.clone_htod(&problem.f())?;
    let mut u = stream.alloc_zeros::<f32>(len as usize)?;
    let mut v = stream.alloc_zeros::<f32>(len as usize)?;
    let mut residual = stream.alloc_zeros::<f64>(1)?;
    let mut iterations = stream.alloc_zeros::<u32>(1)?;
    let bufs = JacobiBuffers {
        u: ptr(&u, &stream),
        v: ptr(&v, &stream),
        f: ptr(&f, &stream),
        residual: ptr(&residual, &stream),
        iterations: ptr(&iterations, &stream),
    };
    let mut times = SolverTimes {
        n,
        tolerance,
        us: Default::default(),
        steps: [0; 4],
    };
    for round in 0..rounds {
        for k in 0..4 {
            let variant = (k + round) % 4;
            let (us, steps) = match variant {
                0 => {
                    stream.memset_zeros(&mut u)?;
                    stream.memset_zeros(&mut v)?;
                    let step = JacobiStep::build(ctx, &mut u, &mut v, &f, width, h2, len)?;
                    let mut exec = step.instantiate()?;
                    exec.upload(&stream)?;
                    stream.synchronize()?;
                    let start = Instant::now();
                    let mut steps = 0u32;
                    loop {
                        exec.launch_on_own_stream()?;
                        steps += 1;
                        let mut norm2 = [0.0f64];
                        exec.residual()?.copy_to_host(&mut norm2)?;
                        let norm2 = norm2[0];
                        if norm2 <= tol2 || steps >= limit {
                            break;
                        }
                    }
                    (start.elapsed().as_secs_f64() * 1e6, steps)
                }
                1 => {
                    stream.memset_zeros(&mut u)?;
                    stream.memset_zeros(&mut v)?;
                    stream.memset_zeros(&mut iterations)?;
                    let solve = JacobiSolve::build(
                        ctx,
                        &mut u,
                        &mut v,
                        &f,
                        &mut residual,
                        &mut iterations,
                        width,
                        h2,
                        len,
                        tol2,
                        limit,
                    )?;
                    let counted = solve.bound().iterations;
                    let mut exec = solve.instantiate()?;
                    exec.upload(&stream)?;
                    stream.synchronize()?;
                    let start = Instant::now();
                    exec.launch(&stream)?;
                    let steps = stream.clone_dtoh(&exec.bound_mut(counted)?.view())?[0];
                    (start.elapsed().as_secs_f64() * 1e6, steps)
                }
                2 | 3 => {
                    stream.synchronize()?;
                    cpp.jacobi(variant == 3, width, h2, len, bufs, tol2, limit)?
                }
                _ => unreachable!("four variants"),
            };
            if steps >= limit {
                return Err(format!(
                    "{}: no convergence in {limit} steps",
                    SOLVER_VARIANTS[variant]
                )
                .into());
            }
            times.us[variant].push(us);
            times.steps[variant] = steps;
        }
    }
    let (lo, hi) = (times.steps.iter().min(), times.steps.iter().max());
    if hi.zip(lo).is_some_and(|(h, l)| h - l > 1) {
        return Err(format!(
            "the solvers took different numbers of steps: {:?}",
            times.steps
        )
        .into());
    }
    // The result of the last Rust-or-C++ solve against the CPU's sweeps.
    let gpu = stream.clone_dtoh(&u)?;
    let last = (rounds + 2) % 4;
    let cpu = problem.cpu(2 * times.steps[last] as usize);
    let worst = gpu
        .iter()
        .zip(&cpu)
        .map(|(g, c)| (g - c).abs())
        .fold(0.0f32, f32::max);
    if worst > 1e-5 {
        return Err(format!("the solution differs from the CPU's by {worst}").into());
    }
    Ok(times)
}
