//! cuBLAS in a graph with cudarc's event tracking on (the default): a GEMM
//! captured into a `capture` node, then a power iteration whose WHILE body
//! captures a GEMV and normalizes with a kernel. The captured calls take
//! the capture's views of the graph's buffers (`s.read(a)`, `s.write(c)`),
//! so the capture holds only the library's kernels and each launch orders
//! the buffers with cudarc's work on other streams. Checked against the
//! same computation on the host.

#[path = "common.rs"]
mod common;

use graph_runtime::capture::{failed, CaptureViewMut};
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::cublas::sys::{cublasOperation_t::CUBLAS_OP_N, cublasSetWorkspace_v2};
use graph_runtime::cudarc::cublas::{CudaBlas, Gemm, GemmConfig, Gemv, GemvConfig};
use graph_runtime::cudarc::driver::{CudaSlice, CudaStream, DevicePtrMut, DeviceSlice};
use std::sync::Arc;

/// cuBLAS's scratch memory (its recommended size on Hopper).
const WORKSPACE_BYTES: usize = 32 << 20;

/// Gives cuBLAS `workspace`, a graph buffer, as its scratch memory for the
/// calls captured next. Without one, cuBLAS allocates scratch memory with
/// `cudaMallocAsync` inside the capture for some shapes, which becomes a
/// memory node that a capture node may not hold. The captured kernels keep
/// its address, so it must be the graph's, not a temporary.
fn use_workspace(
    blas: &CudaBlas,
    workspace: &mut CaptureViewMut<'_, u8>,
) -> graph_runtime::Result<()> {
    let (bytes, stream) = (workspace.len(), workspace.stream().clone());
    let (ptr, _) = workspace.device_ptr_mut(&stream);
    // SAFETY: a live handle, and `bytes` of device memory that outlive the
    // graph and its execs (a buffer bound to the graph).
    unsafe { cublasSetWorkspace_v2(*blas.handle(), ptr as *mut std::ffi::c_void, bytes) }
        .result()
        .map_err(|e| failed("cublasSetWorkspace_v2", e))
}

/// `c = a b` for n x n column-major matrices.
fn gemm_config(n: u32) -> GemmConfig<f32> {
    let n = n as i32;
    GemmConfig {
        transa: CUBLAS_OP_N,
        transb: CUBLAS_OP_N,
        m: n,
        n,
        k: n,
        alpha: 1.0,
        lda: n,
        ldb: n,
        beta: 0.0,
        ldc: n,
    }
}

/// `y = c x` for an n x n column-major matrix.
fn gemv_config(n: u32) -> GemvConfig<f32> {
    let n = n as i32;
    GemvConfig {
        trans: CUBLAS_OP_N,
        m: n,
        n,
        alpha: 1.0,
        lda: n,
        incx: 1,
        beta: 0.0,
        incy: 1,
    }
}

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
            use_workspace(blas, &mut s.write(workspace))?;
            let (a, b, mut c) = (s.read(a), s.read(b), s.write(c));
            let nn = (n * n) as usize;
            assert!(a.len() == nn && b.len() == nn && c.len() == nn, "n x n matrices");
            // SAFETY: n x n column-major matrices with leading dimension n.
            unsafe { blas.gemm(gemm_config(n), &a, &b, &mut c) }
                .map_err(|e| failed("cublasSgemm_v2", e))
        };
        power: while again {
            // SAFETY: the captured GEMV touches only c, x, y and the
            // workspace, through their views (checked to hold n * n and n
            // elements).
            gemv: unsafe capture(stream) |s| {
                use_workspace(blas, &mut s.write(workspace))?;
                let (c, x, mut y) = (s.read(c), s.read(x), s.write(y));
                assert!(c.len() == (n * n) as usize && x.len() == n as usize && y.len() == n as usize);
                // SAFETY: an n x n column-major matrix, vectors of n.
                unsafe { blas.gemv(gemv_config(n), &c, &x, &mut y) }
                    .map_err(|e| failed("cublasSgemv_v2", e))
            };
            step: kernel kernels::NormalizeStep<<<1, 32>>>(again, y, x, counter, n);
            gemv -> step;
        }
        [start, reset, gemm] -> power;
    }
}

/// The same computation on the host, in f64: `c = a b` and the iterate.
fn host_reference(a: &[f32], b: &[f32], x0: &[f32], n: usize, iters: i32) -> (Vec<f64>, Vec<f64>) {
    let mut c = vec![0.0f64; n * n];
    for col in 0..n {
        for k in 0..n {
            let bk = f64::from(b[col * n + k]);
            for row in 0..n {
                c[col * n + row] += f64::from(a[k * n + row]) * bk;
            }
        }
    }
    let mut x: Vec<f64> = x0.iter().map(|v| f64::from(*v)).collect();
    for _ in 0..iters {
        let mut y = vec![0.0f64; n];
        for col in 0..n {
            for row in 0..n {
                y[row] += c[col * n + row] * x[col];
            }
        }
        let norm = y.iter().map(|v| v * v).sum::<f64>().sqrt();
        x = y.iter().map(|v| v / norm).collect();
    }
    (c, x)
}

fn main() -> common::Result {
    let Some(ctx) = common::device_or_dot(&[PowerIteration::DOT])? else {
        return Ok(());
    };
    let stream = ctx.new_stream()?;
    // Uploads and reads on another stream: cudarc's event tracking (on, the
    // default) orders them with the graph's launches; no synchronize.
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
    let (c_h, x_h) = host_reference(&a_h, &b_h, &x0_h, nu, iters);
    let c_err = c_d
        .iter()
        .zip(&c_h)
        .map(|(d, h)| (f64::from(*d) - h).abs() / h.abs().max(1.0))
        .fold(0.0, f64::max);
    let x_err = x_d
        .iter()
        .zip(&x_h)
        .map(|(d, h)| (f64::from(*d) - h).abs())
        .fold(0.0, f64::max);
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
