//! An iterative solver that stops at a tolerance, written twice: a host
//! loop (launch, read the update's norm from the graph's own buffer, decide,
//! relaunch: the exec lives throughout) and entirely on the device (a
//! WHILE node whose handle a kernel clears on convergence). Jacobi
//! iteration for -Laplace(u) = 1 on the unit square, u = 0 on the boundary;
//! both results are checked against the same sweeps on the CPU. The two
//! graphs are in `jacobi_graphs.rs` (the benchmark times the same ones).

#[path = "common.rs"]
mod common;
#[path = "jacobi_graphs.rs"]
mod graphs;

use graphs::{JacobiSolve, JacobiStep};
use kernels::jacobi::Problem;
use std::time::Instant;

/// Stop once the update's L2 norm is below this.
const TOLERANCE: f64 = 1e-6;
/// Give up after this many steps (two sweeps each).
const LIMIT: u32 = 100_000;

fn main() -> common::Result {
    let Some(ctx) = common::device_or_dot(&[JacobiStep::DOT, JacobiSolve::DOT])? else {
        return Ok(());
    };
    let stream = ctx.new_stream()?;
    let problem = Problem { n: 64 };
    let (width, len, h2) = (problem.n, problem.len() as u32, problem.h2());
    let tol2 = TOLERANCE * TOLERANCE;
    let f = stream.clone_htod(&problem.f())?;

    // The host loop: the exec lives across launches, on a stream of its
    // own; the norm is read from the graph's own `residual` buffer after
    // each one (on that stream: no event between the launch and the read).
    let mut u = stream.alloc_zeros::<f32>(len as usize)?;
    let mut v = stream.alloc_zeros::<f32>(len as usize)?;
    let (host_steps, host_norm2, host_us);
    {
        let step = JacobiStep::build(&ctx, &mut u, &mut v, &f, width, h2, len)?;
        let mut exec = step.instantiate()?;
        let start = Instant::now();
        let mut steps = 0u32;
        // Read into host memory of our own: no allocation per step.
        let mut norm2 = [0.0f64];
        let norm2 = loop {
            exec.launch_on_own_stream()?;
            steps += 1;
            exec.residual()?.copy_to_host(&mut norm2)?;
            let norm2 = norm2[0];
            if norm2 <= tol2 || steps >= LIMIT {
                break norm2;
            }
        };
        host_us = start.elapsed().as_secs_f64() * 1e6;
        (host_steps, host_norm2) = (steps, norm2);
    }
    let host_u = stream.clone_dtoh(&u)?;

    // On the device: one launch runs the whole loop.
    let mut u = stream.alloc_zeros::<f32>(len as usize)?;
    let mut v = stream.alloc_zeros::<f32>(len as usize)?;
    let mut residual = stream.alloc_zeros::<f64>(1)?;
    let mut iterations = stream.alloc_zeros::<u32>(1)?;
    let device_us;
    {
        let solve = JacobiSolve::build(
            &ctx,
            &mut u,
            &mut v,
            &f,
            &mut residual,
            &mut iterations,
            width,
            h2,
            len,
            tol2,
            LIMIT,
        )?;
        let mut exec = solve.instantiate()?;
        exec.upload(&stream)?;
        let start = Instant::now();
        exec.launch(&stream)?;
        exec.synchronize()?;
        device_us = start.elapsed().as_secs_f64() * 1e6;
    }
    let device_steps = stream.clone_dtoh(&iterations)?[0];
    let device_norm2 = stream.clone_dtoh(&residual)?[0];
    let device_u = stream.clone_dtoh(&u)?;

    println!(
        "{n} x {n} grid, tolerance {TOLERANCE:e}: host loop {host_steps} steps in {:.1} ms ({:.2} us/step), device WHILE {device_steps} steps in {:.1} ms ({:.2} us/step)",
        host_us / 1e3,
        host_us / f64::from(host_steps),
        device_us / 1e3,
        device_us / f64::from(device_steps.max(1)),
        n = problem.n,
    );
    common::ensure(
        host_norm2 <= tol2 && host_steps < LIMIT,
        format!(
            "the host loop converged (update norm {:.2e})",
            host_norm2.sqrt()
        ),
    )?;
    common::ensure(
        device_norm2 <= tol2 && device_steps < LIMIT,
        format!(
            "the device loop converged (update norm {:.2e})",
            device_norm2.sqrt()
        ),
    )?;
    // The norm is summed with atomics (in any order), so the two loops may
    // cross the tolerance one step apart.
    common::ensure(
        host_steps.abs_diff(device_steps) <= 1,
        format!("both loops took the same number of steps ({host_steps}, {device_steps})"),
    )?;
    for (name, gpu, steps) in [
        ("host loop", &host_u, host_steps),
        ("device WHILE", &device_u, device_steps),
    ] {
        let cpu = problem.cpu(2 * steps as usize);
        let worst = gpu
            .iter()
            .zip(&cpu)
            .map(|(g, c)| (g - c).abs())
            .fold(0.0f32, f32::max);
        let peak = cpu.iter().cloned().fold(0.0f32, f32::max);
        common::ensure(
            worst <= 1e-5 && peak > 0.07,
            format!("{name}: u matches the CPU's {} sweeps (max difference {worst:.1e}, peak {peak:.4})", 2 * steps),
        )?;
    }
    Ok(())
}
