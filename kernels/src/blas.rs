//! cuBLAS in graphs, as the cuBLAS example and tests use it: the scratch
//! memory cuBLAS needs inside a capture, and the column-major square GEMM
//! and GEMV shapes they run, and their results computed on the host.

use graph_runtime::capture::{failed, CaptureViewMut};
use graph_runtime::cudarc::cublas::sys::{cublasOperation_t::CUBLAS_OP_N, cublasSetWorkspace_v2};
use graph_runtime::cudarc::cublas::{CudaBlas, GemmConfig, GemvConfig};
use graph_runtime::cudarc::driver::{DevicePtrMut, DeviceSlice};

/// cuBLAS's scratch memory (its recommended size on Hopper).
pub const WORKSPACE_BYTES: usize = 32 << 20;

/// Gives cuBLAS `workspace`, a graph buffer, as its scratch memory for the
/// calls captured next. Without one, cuBLAS allocates scratch memory with
/// `cudaMallocAsync` inside the capture for some shapes, which becomes a
/// memory node that a capture node may not hold. The captured kernels keep
/// its address, so it must be the graph's, not a temporary.
///
/// # Errors
/// cuBLAS's refusal, as [`graph_runtime::GraphError::CaptureWork`].
///
/// # Safety
/// cuBLAS keeps the address in `blas` after the capture: every later
/// call on the handle may write there. The caller gives the handle another
/// workspace (this function again, in each capture) before any use of it
/// once the graph's buffer may be gone.
pub unsafe fn use_workspace(
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
pub fn gemm_config(n: usize) -> GemmConfig<f32> {
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
pub fn gemv_config(n: usize) -> GemvConfig<f32> {
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

/// `c = a b` (column-major n x n) in f64.
pub fn host_gemm(a: &[f32], b: &[f32], n: usize) -> Vec<f64> {
    let mut c = vec![0.0f64; n * n];
    for col in 0..n {
        for k in 0..n {
            let bk = f64::from(b[col * n + k]);
            for row in 0..n {
                c[col * n + row] += f64::from(a[k * n + row]) * bk;
            }
        }
    }
    c
}

/// `steps` power-iteration steps `x = c x / |c x|` in f64.
pub fn host_power(c: &[f64], x0: &[f32], n: usize, steps: i32) -> Vec<f64> {
    let mut x: Vec<f64> = x0.iter().map(|v| f64::from(*v)).collect();
    for _ in 0..steps {
        let mut y = vec![0.0f64; n];
        for col in 0..n {
            for row in 0..n {
                y[row] += c[col * n + row] * x[col];
            }
        }
        let norm = y.iter().map(|v| v * v).sum::<f64>().sqrt();
        x = y.iter().map(|v| v / norm).collect();
    }
    x
}

/// The largest error of `device` against `host`, relative where `|host| > 1`.
pub fn max_error(device: &[f32], host: &[f64]) -> f64 {
    assert_eq!(device.len(), host.len());
    device
        .iter()
        .zip(host)
        .map(|(d, h)| (f64::from(*d) - h).abs() / h.abs().max(1.0))
        .fold(0.0, f64::max)
}
