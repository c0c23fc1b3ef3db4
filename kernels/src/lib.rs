//! The CUDA C kernels the examples, tests and benchmarks use, embedded with
//! `include_str!` and compiled by NVRTC on first use (once per context), each
//! with a typed declaration: a kernel node's arguments are checked by rustc
//! against it. Declare your own kernels the same way, in one statement:
//!
//! ```
//! use graph_runtime::kernel::{KernelDecl, Out};
//! const SOURCE: &str = r#"extern "C" __global__ void zero(float* x, unsigned n) {
//!     unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = 0.0f; }"#;
//! // SAFETY: `zero` takes (float*, unsigned) and writes only x[0..n].
//! pub static ZERO: KernelDecl<(Out<f32>, u32)> = unsafe { KernelDecl::cuda_c(SOURCE, "zero") };
//! ```
//!
//! (`KernelDecl::ptx` and `KernelDecl::cubin` take precompiled code, and
//! `Kernel::from_function` wraps a cudarc `CudaFunction` already loaded.)

use graph_runtime::kernel::{Cond, ExecParam, In, KernelDecl, Out};

/// Elementwise kernels (`cuda/elementwise.cu`).
pub const ELEMENTWISE_SOURCE: &str = include_str!("../cuda/elementwise.cu");
/// Two-stage reduction (`cuda/reduce.cu`).
pub const REDUCE_SOURCE: &str = include_str!("../cuda/reduce.cu");
/// Conditional-node drivers (`cuda/conditional.cu`).
pub const CONDITIONAL_SOURCE: &str = include_str!("../cuda/conditional.cu");
/// Device graph launch (`cuda/launch.cu`).
pub const LAUNCH_SOURCE: &str = include_str!("../cuda/launch.cu");

/// Parameters of [`ADD`].
pub type AddArgs = (In<f32>, In<f32>, Out<f32>, u32);

// Each declaration's SAFETY comment gives the CUDA C signature it matches;
// the kernels touch only the first `n` (or `count`) elements of their
// buffers, or one element where they take no length.

/// `out[i] = a[i] + b[i]` for `i < n`.
pub static ADD: KernelDecl<AddArgs> =
    // SAFETY: matches `add(const float* a, const float* b, float* out, unsigned n)`.
    unsafe { KernelDecl::cuda_c(ELEMENTWISE_SOURCE, "add") };
/// `x[i] *= factor` for `i < n`.
pub static SCALE: KernelDecl<(Out<f32>, f32, u32)> =
    // SAFETY: matches `scale(float* x, float factor, unsigned n)`.
    unsafe { KernelDecl::cuda_c(ELEMENTWISE_SOURCE, "scale") };
/// `x[i] += 1` for `i < n`: the tiny kernel of the benchmarks.
pub static ADD_ONE: KernelDecl<(Out<f32>, u32)> =
    // SAFETY: matches `add_one(float* x, unsigned n)`.
    unsafe { KernelDecl::cuda_c(ELEMENTWISE_SOURCE, "add_one") };
/// `x[i] = i` for `i < n`.
pub static IOTA: KernelDecl<(Out<f32>, u32)> =
    // SAFETY: matches `iota(float* x, unsigned n)`.
    unsafe { KernelDecl::cuda_c(ELEMENTWISE_SOURCE, "iota") };
/// Spins about `cycles` clock cycles, then sets `x[..n] = value`.
pub static SLOW_FILL: KernelDecl<(Out<f32>, f32, u32, i64)> =
    // SAFETY: matches `slow_fill(float* x, float value, unsigned n, long long cycles)`.
    unsafe { KernelDecl::cuda_c(ELEMENTWISE_SOURCE, "slow_fill") };

/// Stage 1: one partial sum per block (256 threads per block).
pub static REDUCE_PARTIAL: KernelDecl<(In<f32>, Out<f64>, u32)> =
    // SAFETY: matches `reduce_partial(const float* x, double* partial, unsigned n); writes partial[blockIdx.x]`.
    unsafe { KernelDecl::cuda_c(REDUCE_SOURCE, "reduce_partial") };
/// Stage 2: `*out = sum(partial[..count])` (one block of 256 threads).
pub static REDUCE_FINAL: KernelDecl<(In<f64>, Out<f64>, u32)> =
    // SAFETY: matches `reduce_final(const double* partial, double* out, unsigned count)`.
    unsafe { KernelDecl::cuda_c(REDUCE_SOURCE, "reduce_final") };

/// Sets a conditional handle to `value`.
pub static SET_CONDITION: KernelDecl<(Cond, u32)> =
    // SAFETY: matches `set_condition(unsigned long long handle, unsigned value)`.
    unsafe { KernelDecl::cuda_c(CONDITIONAL_SOURCE, "set_condition") };
/// Sets a conditional handle to the value in device memory.
pub static SET_CONDITION_FROM: KernelDecl<(Cond, In<u32>)> =
    // SAFETY: matches `set_condition_from(unsigned long long handle, const unsigned* value)`.
    unsafe { KernelDecl::cuda_c(CONDITIONAL_SOURCE, "set_condition_from") };
/// WHILE body: `iterations += 1; counter -= 1; handle = counter > 0`.
pub static COUNTDOWN: KernelDecl<(Cond, Out<i32>, Out<i32>)> =
    // SAFETY: matches `countdown(unsigned long long handle, int* counter, int* iterations)`.
    unsafe { KernelDecl::cuda_c(CONDITIONAL_SOURCE, "countdown") };
/// `visits[slot] += 1`.
pub static MARK: KernelDecl<(Out<i32>, u32)> =
    // SAFETY: matches `mark(int* visits, unsigned slot); the caller keeps slot within visits`.
    unsafe { KernelDecl::cuda_c(CONDITIONAL_SOURCE, "mark") };

/// Launches an exec from the device: mode 0 tail, 1 fire-and-forget, 2 sibling.
pub static LAUNCH_GRAPH: KernelDecl<(ExecParam, u32)> =
    // SAFETY: matches `launch_graph(unsigned long long exec, unsigned mode)`.
    unsafe { KernelDecl::cuda_c(LAUNCH_SOURCE, "launch_graph") };
/// `steps += 1; counter -= 1;` and tail-relaunches its own graph while `counter > 0`.
pub static RELAUNCH_COUNTDOWN: KernelDecl<(Out<i32>, Out<i32>)> =
    // SAFETY: matches `relaunch_countdown(int* counter, int* steps)`.
    unsafe { KernelDecl::cuda_c(LAUNCH_SOURCE, "relaunch_countdown") };

#[cfg(test)]
mod tests {
    #[test]
    fn declarations_name_kernels_defined_in_their_sources() {
        let decls: [(&str, &str); 14] = [
            (super::ELEMENTWISE_SOURCE, super::ADD.name()),
            (super::ELEMENTWISE_SOURCE, super::SCALE.name()),
            (super::ELEMENTWISE_SOURCE, super::ADD_ONE.name()),
            (super::ELEMENTWISE_SOURCE, super::IOTA.name()),
            (super::ELEMENTWISE_SOURCE, super::SLOW_FILL.name()),
            (super::REDUCE_SOURCE, super::REDUCE_PARTIAL.name()),
            (super::REDUCE_SOURCE, super::REDUCE_FINAL.name()),
            (super::CONDITIONAL_SOURCE, super::SET_CONDITION.name()),
            (super::CONDITIONAL_SOURCE, super::SET_CONDITION_FROM.name()),
            (super::CONDITIONAL_SOURCE, super::COUNTDOWN.name()),
            (super::CONDITIONAL_SOURCE, super::MARK.name()),
            (super::LAUNCH_SOURCE, super::LAUNCH_GRAPH.name()),
            (super::LAUNCH_SOURCE, super::RELAUNCH_COUNTDOWN.name()),
            (super::ELEMENTWISE_SOURCE, "add"),
        ];
        for (source, name) in decls {
            assert!(
                source.contains(&format!("__global__ void {name}(")),
                "`{name}` is not defined in its source"
            );
        }
    }
}
