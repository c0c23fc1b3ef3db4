//! The Jacobi solver's graphs (examples/jacobi.rs), shared with the
//! benchmark, which times the same graphs against C++.

use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    /// One step of the host loop: two sweeps (u -> v -> u), then the squared
    /// norm of the last update into `residual`, a buffer the graph owns (the
    /// host reads it after each launch: `exec.residual()?.copy_to_host(..)`).
    pub graph JacobiStep(u: &mut CudaSlice<f32>, v: &mut CudaSlice<f32>, f: &CudaSlice<f32>,
                     width: u32, h2: f32, len: u32) {
        buffer residual: f64[1];
        reset: fill residual = 0.0f64;
        forth: kernel kernels::JacobiSweep<<<len.div_ceil(256), 256>>>(u, f, v, width, h2, len);
        back:  kernel kernels::JacobiSweep<<<len.div_ceil(256), 256>>>(v, f, u, width, h2, len);
        norm:  kernel kernels::SqDiffSum<<<len.div_ceil(256).min(264), 256>>>(u, v, residual, len);
        forth -> back -> norm;
        reset -> norm;
    }

    /// The whole solve on the device: the same step in a WHILE body, and a
    /// kernel that counts it and clears the handle once the norm is small.
    pub graph JacobiSolve(u: &mut CudaSlice<f32>, v: &mut CudaSlice<f32>, f: &CudaSlice<f32>,
                      residual: &mut CudaSlice<f64>, iterations: &mut CudaSlice<u32>,
                      width: u32, h2: f32, len: u32, tol2: f64, limit: u32) {
        cond again = 1;
        solve: while again {
            reset: fill residual = 0.0f64;
            forth: kernel kernels::JacobiSweep<<<len.div_ceil(256), 256>>>(u, f, v, width, h2, len);
            back:  kernel kernels::JacobiSweep<<<len.div_ceil(256), 256>>>(v, f, u, width, h2, len);
            norm:  kernel kernels::SqDiffSum<<<len.div_ceil(256).min(264), 256>>>(u, v, residual, len);
            test:  kernel kernels::JacobiContinue<<<1, 1>>>(again, residual, iterations, tol2, limit);
            forth -> back -> norm -> test;
            reset -> norm;
        }
    }
}
