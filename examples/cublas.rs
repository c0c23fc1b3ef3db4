//! cuBLAS in a graph with cudarc's event tracking on (the default): a GEMM
//! captured into a `capture` node, then a power iteration whose WHILE body
//! captures a GEMV and normalizes with a kernel. The captured calls take
//! the capture's views of the graph's buffers (`s.read(a)`, `s.write(c)`),
//! so the capture holds only the library's kernels and each launch orders
//! the buffers with cudarc's work on other streams. Checked against the
//! same computation on the host.

#[path = "common.rs"]
mod common;

use graph_runtime::capture::failed;
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::cublas::{CudaBlas, Gemm, Gemv};
use graph_runtime::cudarc::driver::{CudaSlice, CudaStream, DeviceSlice};
use kernels::blas::{
    gemm_config, gemv_config, host_gemm, host_power, max_error, use_workspace, WORKSPACE_BYTES,
};
use std::sync::Arc;

cuda_graph! {
    /// `c = a b`, then `iters` steps of `x = c x / |c x|` from `x0`.
    graph PowerIteration(blas: &CudaBlas, stream: &Arc<CudaStream>,
                         a: &CudaSlice<f32>, b: &CudaSlice<f32>, c: &mut CudaSlice<f32>,
                         x0: &CudaSlice<f32>, x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>,
                         counter: &mut CudaSlice<i32>, workspace: &mut CudaSlice<u8>, n: u32, iters: i32) {
        cond again = 1;
        start: copy x0 => x;
        reset: fill counter = iters;
        // SAFETY: the captured GEMM touches only a, b, c and the
        // workspace, through their views (checked to hold n * n elements).
        gemm: unsafe capture(stream) |s| {
            // SAFETY: the handle is used only in captures that each give it
            // the workspace first.
            unsafe { use_workspace(blas, &mut s.write(workspace)) }?;
            let (a, b, mut c) = (s.read(a), s.read(b), s.write(c));
            let nn = (n * n) as usize;
            assert!(a.len() == nn && b.len() == nn && c.len() == nn, "n x n matrices");
            // SAFETY: n x n column-major matrices with leading dimension n.
            unsafe { blas.gemm(gemm_config(n as usize), &a, &b, &mut c) }
                .map_err(|e| failed("cublasSgemm_v2", e))
        };
        power: while again {
            // SAFETY: the captured GEMV touches only c, x, y and the
            // workspace, through their views (checked to hold n * n and n
            // elements).
            gemv: unsafe capture(stream) |s| {
                // SAFETY: the handle is used only in captures that each give it
                // the workspace first.
                unsafe { use_workspace(blas, &mut s.write(workspace)) }?;
                let (c, x, mut y) = (s.read(c), s.read(x), s.write(y));
                assert!(c.len() == (n * n) as usize && x.len() == n as usize && y.len() == n as usize);
                // SAFETY: an n x n column-major matrix, vectors of n.
                unsafe { blas.gemv(gemv_config(n as usize), &c, &x, &mut y) }
                    .map_err(|e| failed("cublasSgemv_v2", e))
            };
            step: kernel kernels::NormalizeStep<<<1, 32>>>(again, y, x, counter, n);
            gemv -> step;
        }
        [start, reset, gemm] -> power;
    }
}

fn main() -> common::Result {
    let Some(ctx) = common::device_or_dot(&[PowerIteration::DOT])? else {
        return Ok(());
    };
    let stream = ctx.new_stream()?;
    // Uploads on another stream: cudarc's event tracking (on, the default)
    // orders the graph's launches after them, with no synchronize. (The
    // reads after the exec's block follow its drop, which waits for it.)
    let side = ctx.new_stream()?;
    common::ensure(
        ctx.is_managing_stream_synchronization(),
        "cudarc's event tracking is on",
    )?;
    let (n, iters) = (192u32, 30i32);
    let nu = n as usize;
    let a_h: Vec<f32> = (0..nu * nu)
        .map(|i| 1.0 / (1.0 + ((i % nu) + 2 * (i / nu)) as f32))
        .collect();
    let b_h: Vec<f32> = (0..nu * nu)
        .map(|i| 0.5 + ((i * 7) % 11) as f32 / 11.0)
        .collect();
    let x0_h: Vec<f32> = (0..nu).map(|i| 1.0 + (i % 3) as f32).collect();
    let (a, b, x0) = (
        side.clone_htod(&a_h)?,
        side.clone_htod(&b_h)?,
        side.clone_htod(&x0_h)?,
    );
    let mut c = side.alloc_zeros::<f32>(nu * nu)?;
    let (mut x, mut y) = (side.alloc_zeros::<f32>(nu)?, side.alloc_zeros::<f32>(nu)?);
    let mut counter = side.alloc_zeros::<i32>(1)?;
    let mut workspace = side.alloc_zeros::<u8>(WORKSPACE_BYTES)?;
    let blas = CudaBlas::new(stream.clone())?;
    {
        let graph = PowerIteration::build(
            &ctx,
            &blas,
            &stream,
            &a,
            &b,
            &mut c,
            &x0,
            &mut x,
            &mut y,
            &mut counter,
            &mut workspace,
            n,
            iters,
        )?;
        let mut exec = graph.instantiate()?;
        // Twice: the graph resets its own state (x from x0, the counter).
        exec.launch(&stream)?;
        exec.launch(&stream)?;
    }
    let (c_d, x_d, left) = (
        side.clone_dtoh(&c)?,
        side.clone_dtoh(&x)?,
        side.clone_dtoh(&counter)?,
    );
    // On the host in f64. (x is a unit vector: its error is absolute.)
    let c_h = host_gemm(&a_h, &b_h, nu);
    let x_h = host_power(&c_h, &x0_h, nu, iters);
    let (c_err, x_err) = (max_error(&c_d, &c_h), max_error(&x_d, &x_h));
    println!(
        "{n} x {n}: GEMM max relative error {c_err:.2e}; {iters} GEMV steps: max error {x_err:.2e}"
    );
    common::ensure(c_err < 1e-5, "the captured GEMM matches the host")?;
    common::ensure(
        x_err < 1e-5,
        "the power iteration (captured GEMV in a WHILE) matches the host",
    )?;
    common::ensure(left == [0], "the WHILE ran its iterations down to zero")
}
