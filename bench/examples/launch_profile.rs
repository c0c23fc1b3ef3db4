//! The launch loop's cost per iteration, part by part: launch a
//! one-kernel graph and read 4 bytes of its buffer back, as the
//! launch-loop benchmark does, nine ways, interleaved round by round:
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
//!   its stream: the price of the runtime's capture checks;
//! - `raw, relaxed wait`: `raw` waiting in the relaxed capture mode, as a
//!   loan's copy waits (two `cuThreadExchangeStreamCaptureMode`);
//! - `raw, another stream`: `raw` on a second stream of the caller's.
//!
//! Each iteration is a launch call and a read, timed apart: the read
//! waits for the GPU, so host work before `cuGraphLaunch` returns is what
//! an iteration pays in full. Over a real driver every value read back is
//! checked (each launch adds one) and the medians over rounds are printed,
//! in microseconds: per iteration, and of the launch call alone. Over the
//! do-nothing driver (`scripts/launch-profile` runs the first and third
//! under callgrind) nothing runs or is checked: the instruction counts are
//! the runtime's own host work.
//!

use graph_runtime::cudarc::driver::{sys, CudaSlice, CudaStream, DevicePtr};
use graph_runtime::kernel::KernelDef;
use graph_runtime::{Buf, Exec, Graph, LaunchConfig};
use std::cell::{Cell, RefCell};
use std::sync::Arc;

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The launch of `owned`: the exec on its own stream (what callgrind
/// counts, with `owned_read`).
#[inline(never)]
fn owned_launch(exec: &mut Exec<'_>) -> Result {
    Ok(exec.launch_on_own_stream()?)
}

/// The read of `owned`: a loan of the graph-owned buffer.
#[inline(never)]
fn owned_read<'a>(exec: &mut Exec<'a>, head: Buf<'a, f32>) -> Result<f32> {
    let mut value = [0.0f32];
    exec.buffer(head)?.copy_to_host(&mut value)?;
    Ok(value[0])
}

/// The launch of `bound`, on `stream` (what callgrind counts, with
/// `bound_read`).
#[inline(never)]
fn bound_launch(exec: &mut Exec<'_>, stream: &Arc<CudaStream>) -> Result {
    Ok(exec.launch(stream)?)
}

/// The read of `bound` (and `bound, own stream`): the bound slice through
/// cudarc, on `stream`.
#[inline(never)]
fn bound_read<'a>(
    exec: &mut Exec<'a>,
    stream: &Arc<CudaStream>,
    head: Buf<'a, f32>,
) -> Result<f32> {
    let value = stream.clone_dtoh(&exec.bound_mut(head)?.view())?[0];
    Ok(value)
}

/// The launch of the floor: the exec's handle through the driver directly.
fn raw_launch(exec: &Exec<'_>, stream: &CudaStream) -> Result {
    // SAFETY: the exec and the stream are live.
    Ok(unsafe { sys::cuGraphLaunch(exec.cu_graph_exec(), stream.cu_stream()) }.result()?)
}

/// The read of the floor: 4 bytes at `ptr` copied on `stream`, waited for.
fn raw_read(stream: &CudaStream, ptr: u64) -> Result<f32> {
    raw_read_waiting(stream, ptr, |stream| {
        // SAFETY: the stream is live.
        unsafe { sys::cuStreamSynchronize(stream) }.result()
    })
}

/// As [`raw_read`], waiting with `wait`.
fn raw_read_waiting(
    stream: &CudaStream,
    ptr: u64,
    wait: impl FnOnce(
        sys::CUstream,
    ) -> std::result::Result<(), graph_runtime::cudarc::driver::DriverError>,
) -> Result<f32> {
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
    }
    wait(stream.cu_stream())?;
    Ok(value)
}

/// A way to run the loop: its name, the count its buffer holds, its
/// launch and its read, and each round's microseconds per iteration (the
/// whole iteration, and the launch call alone).
struct Variant<'v> {
    name: &'static str,
    count: &'v Cell<f32>,
    launch: Box<dyn FnMut() -> Result + 'v>,
    read: Box<dyn FnMut() -> Result<f32> + 'v>,
    us: Vec<f64>,
    launch_us: Vec<f64>,
}

impl<'v> Variant<'v> {
    fn new(
        name: &'static str,
        count: &'v Cell<f32>,
        launch: impl FnMut() -> Result + 'v,
        read: impl FnMut() -> Result<f32> + 'v,
    ) -> Self {
        Variant {
            name,
            count,
            launch: Box::new(launch),
            read: Box::new(read),
            us: Vec::new(),
            launch_us: Vec::new(),
        }
    }

    /// One round: `iters` iterations, each value checked if `checked`.
    fn round(&mut self, iters: usize, checked: bool) -> Result {
        let (mut whole, mut launch) = (0.0, 0.0);
        for _ in 0..iters {
            let start = std::time::Instant::now();
            (self.launch)()?;
            let launched = std::time::Instant::now();
            let value = (self.read)()?;
            whole += start.elapsed().as_secs_f64();
            launch += (launched - start).as_secs_f64();
            self.count.set(self.count.get() + 1.0);
            if checked && value != self.count.get() {
                return Err(
                    format!("{}: read {value}, not {}", self.name, self.count.get()).into(),
                );
            }
        }
        self.us.push(whole * 1e6 / iters as f64);
        self.launch_us.push(launch * 1e6 / iters as f64);
        Ok(())
    }
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
    // A second stream of the caller's, made after the first (as an
    // exec's own stream is): "raw, another stream".
    let other = ctx.new_stream()?;
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
    let owned_exec = RefCell::new(owned_graph.instantiate()?);
    let bound_exec = RefCell::new(bound_graph.instantiate()?);
    let (owned_count, bound_count) = (Cell::new(0.0), Cell::new(0.0));
    let (owned_head, bound_head) = (owned.slice(0..1), bound.slice(0..1));
    let owned_ptr = owned_head.device_ptr();
    // Each earlier iteration waited for its launch: the raw ways may use
    // the execs the runtime launched.
    let mut variants = vec![
        Variant::new(
            "owned",
            &owned_count,
            || owned_launch(&mut owned_exec.borrow_mut()),
            || owned_read(&mut owned_exec.borrow_mut(), owned_head),
        ),
        Variant::new(
            "owned, caller's stream",
            &owned_count,
            || Ok(owned_exec.borrow_mut().launch(&stream)?),
            // Not through `owned_read`: callgrind counts `owned`'s alone.
            || {
                let mut value = [0.0f32];
                let mut exec = owned_exec.borrow_mut();
                exec.buffer(owned_head)?.copy_to_host(&mut value)?;
                Ok(value[0])
            },
        ),
        Variant::new(
            "bound",
            &bound_count,
            || bound_launch(&mut bound_exec.borrow_mut(), &stream),
            || bound_read(&mut bound_exec.borrow_mut(), &stream, bound_head),
        ),
        Variant::new(
            "bound, own stream",
            &bound_count,
            || Ok(bound_exec.borrow_mut().launch_on_own_stream()?),
            // Not through `bound_read`: callgrind counts `bound`'s alone.
            || {
                let mut exec = bound_exec.borrow_mut();
                let value = stream.clone_dtoh(&exec.bound_mut(bound_head)?.view())?[0];
                Ok(value)
            },
        ),
        Variant::new(
            "owned, raw",
            &owned_count,
            || raw_launch(&owned_exec.borrow(), &stream),
            || raw_read(&stream, owned_ptr),
        ),
        Variant::new(
            "raw, 4 capture queries",
            &bound_count,
            || {
                // The floor plus four `cuStreamIsCapturing` on the launch
                // stream: what one of the runtime's capture checks costs.
                for _ in 0..4 {
                    // SAFETY: the stream is live.
                    unsafe { graph_runtime::result::is_capturing(stream.cu_stream()) }?;
                }
                raw_launch(&bound_exec.borrow(), &stream)
            },
            || raw_read(&stream, ptr),
        ),
        Variant::new(
            "raw, relaxed wait",
            &bound_count,
            || raw_launch(&bound_exec.borrow(), &stream),
            || {
                // The floor, its wait in the relaxed capture mode (two
                // `cuThreadExchangeStreamCaptureMode`), as a loan waits.
                raw_read_waiting(&stream, ptr, |stream| {
                    graph_runtime::result::with_relaxed_capture_mode(|| {
                        // SAFETY: the stream is live.
                        unsafe { sys::cuStreamSynchronize(stream) }.result()
                    })
                })
            },
        ),
        Variant::new(
            "raw, another stream",
            &bound_count,
            || raw_launch(&bound_exec.borrow(), &other),
            || raw_read(&other, ptr),
        ),
        Variant::new(
            "raw",
            &bound_count,
            || raw_launch(&bound_exec.borrow(), &stream),
            || raw_read(&stream, ptr),
        ),
    ];
    for _ in 0..rounds {
        for v in &mut variants {
            v.round(iters, checked)?;
        }
    }
    // The owned read's parts, timed apart: the loan, the copy (which
    // waits for the launch), the loan's drop.
    let mut parts = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..iters {
        let mut exec = owned_exec.borrow_mut();
        exec.launch_on_own_stream()?;
        let mut value = [0.0f32];
        let t0 = std::time::Instant::now();
        let loan = exec.buffer(owned_head)?;
        let t1 = std::time::Instant::now();
        loan.copy_to_host(&mut value)?;
        let t2 = std::time::Instant::now();
        drop(loan);
        let t3 = std::time::Instant::now();
        owned_count.set(owned_count.get() + 1.0);
        if checked && value[0] != owned_count.get() {
            return Err(
                format!("owned parts: read {}, not {}", value[0], owned_count.get()).into(),
            );
        }
        for (part, (a, b)) in parts.iter_mut().zip([(t0, t1), (t1, t2), (t2, t3)]) {
            part.push((b - a).as_secs_f64() * 1e6);
        }
    }
    let [loan, copy, release] = parts.map(median);
    println!("owned read, us (medians of {iters}): loan {loan:.3}, copy {copy:.3}, loan's drop {release:.3}");
    let line: Vec<String> = variants
        .into_iter()
        .map(|v| {
            format!(
                "{} {:.2} ({:.2})",
                v.name,
                median(v.us),
                median(v.launch_us)
            )
        })
        .collect();
    println!(
        "{rounds} rounds of {iters} iterations{}, us per iteration (launch call alone), medians: {}",
        if checked {
            ", every value checked"
        } else {
            " (do-nothing driver: nothing checked)"
        },
        line.join(", ")
    );
    Ok(())
}
