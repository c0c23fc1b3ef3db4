//! Host data in the DSL: a pipeline whose host node sums what a copy
//! brought back into host memory the graph owns, launched 1,000 times
//! with a per-node update between launches, every sum checked. The
//! program reads the last copy through the exec afterwards.

#[path = "common.rs"]
mod common;

use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;
use std::sync::{Arc, Mutex};

cuda_graph! {
    /// x = 0, 1, 2, ... times `factor`; brought back into `seen`; summed on
    /// the host into `sums`.
    graph HostSum(x: &mut CudaSlice<f32>, sums: Arc<Mutex<Vec<f64>>>, factor: f32, n: u32) {
        host seen: f32[n];
        fill:  kernel kernels::Iota<<<n.div_ceil(256), 256>>>(x, n);
        scale: kernel kernels::Scale<<<n.div_ceil(256), 256>>>(x, factor, n);
        down:  copy x => seen;
        sum:   host move |seen: &[f32]| {
            let total = seen.iter().map(|v| f64::from(*v)).sum();
            sums.lock().unwrap().push(total);
        };
        fill -> scale -> down -> sum;
    }
}

fn main() -> common::Result {
    let Some(ctx) = common::device_or_dot(&[HostSum::DOT])? else {
        return Ok(());
    };
    let stream = ctx.new_stream()?;
    let n = 1024u32;
    let launches = 1_000;
    let mut x = stream.alloc_zeros::<f32>(n as usize)?;
    let sums = Arc::new(Mutex::new(Vec::new()));
    let graph = HostSum::build(&ctx, &mut x, sums.clone(), 0.0, n)?;
    let bound = graph.bound();
    let mut exec = graph.instantiate()?;
    let start = std::time::Instant::now();
    for i in 0..launches {
        // A per-node update between launches: this launch scales by i.
        exec.scale().set_args((bound.x, i as f32, n))?;
        exec.launch(&stream)?;
    }
    exec.synchronize()?;
    let per_launch_us = start.elapsed().as_secs_f64() * 1e6 / launches as f64;

    // Launch i summed i * (0 + 1 + ... + n - 1): exact in f32 and f64 here.
    let base = f64::from(n) * f64::from(n - 1) / 2.0;
    let sums = sums.lock().map_err(|_| "a host node panicked")?.clone();
    common::ensure(
        sums.len() == launches,
        format!("{} host sums for {launches} launches", sums.len()),
    )?;
    common::ensure(
        sums.iter().enumerate().all(|(i, s)| *s == i as f64 * base),
        "every launch's host node summed that launch's data",
    )?;
    let last = (launches - 1) as f32;
    common::ensure(
        exec.seen()?
            .iter()
            .enumerate()
            .all(|(k, v)| *v == k as f32 * last),
        "the exec hands out the last launch's copy",
    )?;
    println!("{launches} launches with a per-node update each: {per_launch_us:.1} us per launch");
    Ok(())
}
