//! A pipeline whose host nodes consume what copy nodes bring back: each
//! launch generates a batch on the device, copies it into a graph-owned
//! host buffer, a host node computes its mean, another writes the shift
//! that centres the batch into a second host buffer, a copy node takes it
//! to the device, and a kernel centres the batch. Between launches the
//! program updates the batch's scale and reads the centred batch from its
//! bound buffer. No `unsafe`: host buffers are ordered with the nodes that
//! use them, checked as the graph is built.

#[path = "common.rs"]
mod common;

use graph_runtime::kernel::KernelDef;
use graph_runtime::{Graph, LaunchConfig};
use std::sync::{Arc, Mutex};

const N: u32 = 1 << 14;

fn main() -> common::Result {
    let Some(ctx) = common::device_or_dot(&[])? else {
        return Ok(());
    };
    let stream = ctx.new_stream()?;
    let (iota, scale, add) = (
        kernels::Iota::load(&ctx)?,
        kernels::Scale::load(&ctx)?,
        kernels::Add::load(&ctx)?,
    );
    let mut x = stream.alloc_zeros::<f32>(N as usize)?;
    let mut shift = stream.alloc_zeros::<f32>(N as usize)?;
    let mut y = stream.alloc_zeros::<f32>(N as usize)?;
    // What the host nodes saw, launch after launch.
    let means = Arc::new(Mutex::new(Vec::<f64>::new()));
    let last_mean = Arc::new(Mutex::new(0.0f64));
    let config = LaunchConfig::for_elements(N, 256);

    let mut g = Graph::new(&ctx)?;
    let (xb, sb, yb) = (
        g.bind_mut(&mut x),
        g.bind_mut(&mut shift),
        g.bind_mut(&mut y),
    );
    let seen = g.add_host_buffer::<f32>(N as usize)?;
    let offsets = g.add_host_buffer::<f32>(N as usize)?;
    let make = g.add_kernel("make", &iota, config, (xb, N), &[])?;
    let scaled = g.add_kernel("scale", &scale, config, (xb, 1.0f32, N), &[make.node()])?;
    let back = g.add_copy("back", xb, &seen, &[scaled.node()])?;
    let (log, mean_out) = (means.clone(), last_mean.clone());
    let stats = g.add_host_reading(
        "mean",
        &seen,
        move |batch: &[f32]| {
            let mean = batch.iter().map(|v| f64::from(*v)).sum::<f64>() / batch.len() as f64;
            log.lock().unwrap().push(mean);
            *mean_out.lock().unwrap() = mean;
        },
        &[back],
    )?;
    let mean_in = last_mean.clone();
    let centre = g.add_host_writing(
        "shift",
        &offsets,
        move |out: &mut [f32]| out.fill(-*mean_in.lock().unwrap() as f32),
        &[stats],
    )?;
    let forth = g.add_copy("forth", &offsets, sb, &[centre])?;
    g.add_kernel("centre", &add, config, (xb, sb, yb, N), &[forth])?;

    let mut exec = g.instantiate()?;
    for factor in 1..=4u32 {
        exec.set_kernel_args(&scaled, (xb, factor as f32, N))?;
        exec.launch(&stream)?;
        let centred = stream.clone_dtoh(&exec.bound_mut(yb)?.view())?;
        let mean = factor as f64 * f64::from(N - 1) / 2.0;
        let ok = centred
            .iter()
            .enumerate()
            .all(|(i, v)| (f64::from(*v) - (factor as f64 * i as f64 - mean)).abs() <= 1e-3 * mean);
        common::ensure(
            ok,
            format!("launch {factor}: the batch is centred on the host's mean {mean}"),
        )?;
        // The host buffer as the last launch left it, read through the exec.
        let host_copy = exec.host_data(&seen)?;
        common::ensure(
            host_copy[7] == 7.0 * factor as f32,
            format!("launch {factor}: the copy node brought the batch back"),
        )?;
    }
    drop(exec);
    drop(g);
    let means = means.lock().unwrap().clone();
    let expected: Vec<f64> = (1..=4).map(|k| k as f64 * f64::from(N - 1) / 2.0).collect();
    common::ensure(
        means == expected,
        format!("the host node saw each batch: means {means:?}"),
    )
}
