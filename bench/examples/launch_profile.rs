//! The launch loop's host work per iteration, for a profiler: launch a
//! one-kernel graph and read 4 bytes of its buffer back, as the
//! launch-loop benchmark does, for a graph-owned buffer (launched on the
//! exec's own stream) and for a bound cudarc slice (launched on a stream
//! of the caller's). Over a do-nothing driver (`scripts/launch-profile`
//! makes one and runs this under callgrind) what is counted is the
//! runtime's own work; over a real one it checks every value read back
//! (each launch adds one) and prints microseconds per iteration.
//!
//! `launch_profile [ITERS]` (default 2000)

use graph_runtime::cudarc::driver::CudaStream;
use graph_runtime::kernel::KernelDef;
use graph_runtime::{Buf, Exec, Graph, LaunchConfig};
use std::sync::Arc;

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

/// One iteration on a graph-owned buffer: what callgrind counts.
#[inline(never)]
fn owned_iteration<'a>(exec: &mut Exec<'a>, head: Buf<'a, f32>) -> Result<f32> {
    exec.launch_on_own_stream()?;
    Ok(exec.buffer(head)?.to_host()?[0])
}

/// One iteration on a bound slice, launched on `stream`.
#[inline(never)]
fn bound_iteration<'a>(
    exec: &mut Exec<'a>,
    stream: &Arc<CudaStream>,
    head: Buf<'a, f32>,
) -> Result<f32> {
    exec.launch(stream)?;
    Ok(stream.clone_dtoh(&exec.bound_mut(head)?.view())?[0])
}

/// Runs `iters` iterations; checks each value unless the driver is the
/// do-nothing one (nothing runs there). Returns us per iteration.
fn timed(iters: usize, checked: bool, mut iteration: impl FnMut() -> Result<f32>) -> Result<f64> {
    let start = std::time::Instant::now();
    for i in 0..iters {
        let value = iteration()?;
        if checked && value != (i + 1) as f32 {
            return Err(format!("iteration {i} read {value}, not {}", i + 1).into());
        }
    }
    Ok(start.elapsed().as_secs_f64() * 1e6 / iters as f64)
}

fn main() -> Result {
    let iters = match std::env::args().nth(1) {
        Some(n) => n.parse()?,
        None => 2000,
    };
    let ctx = graph_runtime::driver::context(0)?;
    let checked = ctx.name()? != "Fake";
    let stream = ctx.new_stream()?;
    let add_one = kernels::AddOne::load(&ctx)?;
    let config = LaunchConfig::new(1, 32);
    let owned_us = {
        let mut g = Graph::new(&ctx)?;
        let x = g.add_buffer::<f32>(32)?;
        g.add_kernel("add_one", &add_one, config, (x, 32u32), &[])?;
        let mut exec = g.instantiate()?;
        let head = x.slice(0..1);
        timed(iters, checked, || owned_iteration(&mut exec, head))?
    };
    let mut x = stream.alloc_zeros::<f32>(32)?;
    let bound_us = {
        let mut g = Graph::new(&ctx)?;
        let xb = g.bind_mut(&mut x);
        g.add_kernel("add_one", &add_one, config, (xb, 32u32), &[])?;
        let mut exec = g.instantiate()?;
        let head = xb.slice(0..1);
        timed(iters, checked, || bound_iteration(&mut exec, &stream, head))?
    };
    println!(
        "{iters} iterations{}: graph-owned on the exec's own stream {owned_us:.2} us, bound on the caller's stream {bound_us:.2} us",
        if checked { ", every value checked" } else { " (do-nothing driver: nothing checked)" }
    );
    Ok(())
}
