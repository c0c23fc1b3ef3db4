//! The launch loop's cost per iteration, part by part: launch a
//! one-kernel graph and read 4 bytes of its buffer back, as the
//! launch-loop benchmark does, seven ways, interleaved round by round:
//!
//! - `owned`: a graph-owned buffer, the exec launched on its own stream,
//!   read through a loan (copied on that stream);
//! - `owned, caller's stream`: the same buffer, launched on a stream of
//!   the caller's, read through a loan (the runtime's copy stream, behind
//!   an event);
//! - `bound`: a bound cudarc slice, launched on the caller's stream, read
//!   with cudarc on that stream;
//! - `bound, own stream`: the same slice, launched on the exec's own
//!   stream, read with cudarc on the caller's (cudarc waits for the
//!   launch's event);
//! - `owned, raw` and `raw`: the owned and the bound exec's handle
//!   launched with `cuGraphLaunch` and the value read with
//!   `cuMemcpyDtoHAsync` on the caller's stream, no runtime: the floor,
//!   as C++ does it;
//! - `raw, 4 capture queries`: `raw` after four `cuStreamIsCapturing` on
//!   its stream: the price of the runtime's capture checks.
//!
//! Over a real driver every value read back is checked (each launch adds
//! one) and the medians over rounds are printed, in microseconds per
//! iteration. Over the do-nothing driver (`scripts/launch-profile` runs
//! the first and third under callgrind) nothing runs or is checked: the
//! instruction counts are the runtime's own host work.
//!
//! `launch_profile [ITERS [ROUNDS]]` (default 200 iterations, 31 rounds;
//! 10 and 3 under `run.sh --sanitize`)

use graph_runtime::cudarc::driver::{sys, CudaSlice, CudaStream, DevicePtr};
use graph_runtime::kernel::KernelDef;
use graph_runtime::{Buf, Exec, Graph, LaunchConfig};
use std::sync::Arc;

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

/// One iteration on a graph-owned buffer, launched on the exec's own
/// stream: what callgrind counts for `owned`.
#[inline(never)]
fn owned_iteration<'a>(exec: &mut Exec<'a>, head: Buf<'a, f32>) -> Result<f32> {
    exec.launch_on_own_stream()?;
    Ok(exec.buffer(head)?.to_host()?[0])
}

/// One iteration on a bound slice, launched on `stream`: what callgrind
/// counts for `bound`.
#[inline(never)]
fn bound_iteration<'a>(
    exec: &mut Exec<'a>,
    stream: &Arc<CudaStream>,
    head: Buf<'a, f32>,
) -> Result<f32> {
    exec.launch(stream)?;
    Ok(stream.clone_dtoh(&exec.bound_mut(head)?.view())?[0])
}

/// One iteration of the floor: the exec's handle and the slice's address
/// through the driver directly, on `stream`.
fn raw_iteration(exec: &Exec<'_>, stream: &CudaStream, ptr: u64) -> Result<f32> {
    // SAFETY: the exec and the stream are live.
    unsafe { sys::cuGraphLaunch(exec.cu_graph_exec(), stream.cu_stream()) }.result()?;
    raw_read(stream, ptr)
}

/// The read of the floor: 4 bytes at `ptr` copied on `stream`, waited for.
fn raw_read(stream: &CudaStream, ptr: u64) -> Result<f32> {
    let mut value = 0.0f32;
    // SAFETY: the stream and the allocation at `ptr` (4 bytes at least)
    // are live; the copy is waited for before `value` is read.
    unsafe {
        sys::cuMemcpyDtoHAsync_v2(
            (&mut value as *mut f32).cast(),
            ptr,
            std::mem::size_of::<f32>(),
            stream.cu_stream(),
        )
        .result()?;
        sys::cuStreamSynchronize(stream.cu_stream()).result()?;
    }
    Ok(value)
}

/// A variant: its name, the count its buffer holds, and its iteration.
struct Variant<'v> {
    name: &'static str,
    count: &'v std::cell::Cell<f32>,
    iteration: Box<dyn FnMut() -> Result<f32> + 'v>,
    us: Vec<f64>,
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() -> Result {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    // Under compute-sanitizer (`run.sh --sanitize` sets the variable) a
    // few iterations check every way; racecheck runs the full default for
    // minutes.
    let sanitized = std::env::var_os("CUDA_GRAPH_SANITIZE").is_some();
    let iters = args
        .next()
        .transpose()?
        .unwrap_or(if sanitized { 10 } else { 200 });
    let rounds = args
        .next()
        .transpose()?
        .unwrap_or(if sanitized { 3 } else { 31 });
    let ctx = graph_runtime::driver::context(0)?;
    let checked = ctx.name()? != "Fake";
    let stream = ctx.new_stream()?;
    let add_one = kernels::AddOne::load(&ctx)?;
    let config = LaunchConfig::new(1, 32);
    let mut x: CudaSlice<f32> = stream.alloc_zeros::<f32>(32)?;
    let (ptr, _synced) = x.device_ptr(&stream);
    drop(_synced);
    stream.synchronize()?;
    let mut owned_graph = Graph::new(&ctx)?;
    let owned = owned_graph.add_buffer::<f32>(32)?;
    owned_graph.add_kernel("add_one", &add_one, config, (owned, 32u32), &[])?;
    let mut bound_graph = Graph::new(&ctx)?;
    let bound = bound_graph.bind_mut(&mut x);
    bound_graph.add_kernel("add_one", &add_one, config, (bound, 32u32), &[])?;
    let owned_exec = std::cell::RefCell::new(owned_graph.instantiate()?);
    let bound_exec = std::cell::RefCell::new(bound_graph.instantiate()?);
    let (owned_count, bound_count) = (std::cell::Cell::new(0.0), std::cell::Cell::new(0.0));
    let (owned_head, bound_head) = (owned.slice(0..1), bound.slice(0..1));
    let mut variants = vec![
        Variant {
            name: "owned",
            count: &owned_count,
            iteration: Box::new(|| owned_iteration(&mut owned_exec.borrow_mut(), owned_head)),
            us: Vec::new(),
        },
        Variant {
            name: "owned, caller's stream",
            count: &owned_count,
            iteration: Box::new(|| {
                let mut exec = owned_exec.borrow_mut();
                exec.launch(&stream)?;
                let value = exec.buffer(owned_head)?.to_host()?[0];
                Ok(value)
            }),
            us: Vec::new(),
        },
        Variant {
            name: "bound",
            count: &bound_count,
            iteration: Box::new(|| {
                bound_iteration(&mut bound_exec.borrow_mut(), &stream, bound_head)
            }),
            us: Vec::new(),
        },
        Variant {
            name: "bound, own stream",
            count: &bound_count,
            iteration: Box::new(|| {
                let mut exec = bound_exec.borrow_mut();
                exec.launch_on_own_stream()?;
                let value = stream.clone_dtoh(&exec.bound_mut(bound_head)?.view())?[0];
                Ok(value)
            }),
            us: Vec::new(),
        },
        Variant {
            name: "owned, raw",
            count: &owned_count,
            iteration: Box::new(|| {
                // The graph-owned buffer through the driver directly, on
                // the caller's stream (each earlier iteration waited).
                let exec = owned_exec.borrow();
                raw_iteration(&exec, &stream, owned_head.device_ptr())
            }),
            us: Vec::new(),
        },
        Variant {
            name: "raw, 4 capture queries",
            count: &bound_count,
            iteration: Box::new(|| {
                // The floor plus four `cuStreamIsCapturing` on the launch
                // stream: what one of the runtime's capture checks costs.
                for _ in 0..4 {
                    // SAFETY: the stream is live.
                    unsafe { graph_runtime::result::is_capturing(stream.cu_stream()) }?;
                }
                let exec = bound_exec.borrow();
                raw_iteration(&exec, &stream, ptr)
            }),
            us: Vec::new(),
        },
        Variant {
            name: "raw",
            count: &bound_count,
            iteration: Box::new(|| {
                // The runtime's launches are done (each iteration waited).
                let exec = bound_exec.borrow();
                raw_iteration(&exec, &stream, ptr)
            }),
            us: Vec::new(),
        },
    ];
    for _ in 0..rounds {
        for v in &mut variants {
            let start = std::time::Instant::now();
            for _ in 0..iters {
                let value = (v.iteration)()?;
                v.count.set(v.count.get() + 1.0);
                if checked && value != v.count.get() {
                    return Err(format!("{}: read {value}, not {}", v.name, v.count.get()).into());
                }
            }
            v.us.push(start.elapsed().as_secs_f64() * 1e6 / iters as f64);
        }
    }
    let line: Vec<String> = variants
        .into_iter()
        .map(|v| format!("{} {:.2}", v.name, median(v.us)))
        .collect();
    println!(
        "{rounds} rounds of {iters} iterations{}, us per iteration (medians): {}",
        if checked {
            ", every value checked"
        } else {
            " (do-nothing driver: nothing checked)"
        },
        line.join(", ")
    );
    // Where an iteration's time goes: the launch call's host time, and
    // the read's (which waits for the GPU), for the owned, bound and raw
    // ways.
    let split = [
        split_times(
            rounds,
            iters,
            &owned_count,
            checked,
            || Ok(owned_exec.borrow_mut().launch_on_own_stream()?),
            || Ok(owned_exec.borrow_mut().buffer(owned_head)?.to_host()?[0]),
        )?,
        split_times(
            rounds,
            iters,
            &bound_count,
            checked,
            || Ok(bound_exec.borrow_mut().launch(&stream)?),
            || {
                let mut exec = bound_exec.borrow_mut();
                let value = stream.clone_dtoh(&exec.bound_mut(bound_head)?.view())?[0];
                Ok(value)
            },
        )?,
        split_times(
            rounds,
            iters,
            &bound_count,
            checked,
            // SAFETY: the exec and stream are live.
            || unsafe {
                Ok(
                    sys::cuGraphLaunch(bound_exec.borrow().cu_graph_exec(), stream.cu_stream())
                        .result()?,
                )
            },
            || raw_read(&stream, ptr),
        )?,
    ];
    println!(
        "host us per call, launch / read (medians): owned {:.2} / {:.2}, bound {:.2} / {:.2}, raw {:.2} / {:.2}",
        split[0].0, split[0].1, split[1].0, split[1].1, split[2].0, split[2].1
    );
    Ok(())
}

/// `rounds` of `iters` iterations of `launch` then `read` (each checked
/// against `count`, as the variants are), timed apart: the medians over
/// rounds of each part's mean, in microseconds.
fn split_times(
    rounds: usize,
    iters: usize,
    count: &std::cell::Cell<f32>,
    checked: bool,
    mut launch: impl FnMut() -> Result,
    mut read: impl FnMut() -> Result<f32>,
) -> Result<(f64, f64)> {
    let (mut launches, mut reads) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (mut l, mut r) = (0.0, 0.0);
        for _ in 0..iters {
            let start = std::time::Instant::now();
            launch()?;
            let launched = std::time::Instant::now();
            let value = read()?;
            r += launched.elapsed().as_secs_f64();
            l += (launched - start).as_secs_f64();
            count.set(count.get() + 1.0);
            if checked && value != count.get() {
                return Err(format!("split: read {value}, not {}", count.get()).into());
            }
        }
        launches.push(l * 1e6 / iters as f64);
        reads.push(r * 1e6 / iters as f64);
    }
    Ok((median(launches), median(reads)))
}
