//! The CUDA C kernels the examples, tests and benchmarks use, embedded with
//! `include_str!` and compiled by NVRTC on first use (once per context), each
//! declared as a type with its parameter types: a kernel node's arguments are
//! checked by rustc against them. Declare your own kernels the same way, in
//! one statement:
//!
//! ```
//! use graph_runtime::kernel::Out;
//! const SOURCE: &str = r#"extern "C" __global__ void zero(float* x, unsigned n) {
//!     unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = 0.0f; }"#;
//! graph_runtime::declare_kernel! {
//!     // SAFETY: `zero` takes (float*, unsigned) and writes only x[0..n].
//!     pub Zero: (Out<f32>, u32) = unsafe cuda_c(SOURCE, "zero");
//! }
//! ```
//!
//! (`unsafe ptx(TEXT, NAME)` and `unsafe cubin(BYTES, NAME)` take precompiled
//! code, and `Kernel::from_function` wraps a cudarc `CudaFunction` already
//! loaded.)

use graph_runtime::kernel::{Cond, ExecParam, In, Out};

/// Elementwise kernels (`cuda/elementwise.cu`).
pub const ELEMENTWISE_SOURCE: &str = include_str!("../cuda/elementwise.cu");
/// Two-stage reduction (`cuda/reduce.cu`).
pub const REDUCE_SOURCE: &str = include_str!("../cuda/reduce.cu");
/// Conditional-node drivers (`cuda/conditional.cu`).
pub const CONDITIONAL_SOURCE: &str = include_str!("../cuda/conditional.cu");
/// Device graph launch (`cuda/launch.cu`).
pub const LAUNCH_SOURCE: &str = include_str!("../cuda/launch.cu");

// Each declaration's SAFETY comment gives the CUDA C signature it matches;
// the kernels touch only the first `n` (or `count`) elements of their
// buffers, or one element where they take no length.
graph_runtime::declare_kernel! {
    /// `out[i] = a[i] + b[i]` for `i < n`.
    // SAFETY: matches `add(const float* a, const float* b, float* out, unsigned n)`.
    pub Add: (In<f32>, In<f32>, Out<f32>, u32) = unsafe cuda_c(ELEMENTWISE_SOURCE, "add");
    /// `x[i] *= factor` for `i < n`.
    // SAFETY: matches `scale(float* x, float factor, unsigned n)`.
    pub Scale: (Out<f32>, f32, u32) = unsafe cuda_c(ELEMENTWISE_SOURCE, "scale");
    /// `x[i] += 1` for `i < n`: the tiny kernel of the benchmarks.
    // SAFETY: matches `add_one(float* x, unsigned n)`.
    pub AddOne: (Out<f32>, u32) = unsafe cuda_c(ELEMENTWISE_SOURCE, "add_one");
    /// `x[i] = i` for `i < n`.
    // SAFETY: matches `iota(float* x, unsigned n)`.
    pub Iota: (Out<f32>, u32) = unsafe cuda_c(ELEMENTWISE_SOURCE, "iota");
    /// Spins about `cycles` clock cycles, then sets `x[..n] = value`.
    // SAFETY: matches `slow_fill(float* x, float value, unsigned n, long long cycles)`.
    pub SlowFill: (Out<f32>, f32, u32, i64) = unsafe cuda_c(ELEMENTWISE_SOURCE, "slow_fill");

    /// Stage 1: one partial sum per block (256 threads per block) into `partial[blockIdx.x]`.
    // SAFETY: matches `reduce_partial(const float* x, double* partial, unsigned n)`;
    // the caller gives `partial` one element per block.
    pub ReducePartial: (In<f32>, Out<f64>, u32) = unsafe cuda_c(REDUCE_SOURCE, "reduce_partial");
    /// Stage 2: `*out = sum(partial[..count])` (one block of 256 threads).
    // SAFETY: matches `reduce_final(const double* partial, double* out, unsigned count)`.
    pub ReduceFinal: (In<f64>, Out<f64>, u32) = unsafe cuda_c(REDUCE_SOURCE, "reduce_final");

    /// Sets a conditional handle to `value`.
    // SAFETY: matches `set_condition(unsigned long long handle, unsigned value)`.
    pub SetCondition: (Cond, u32) = unsafe cuda_c(CONDITIONAL_SOURCE, "set_condition");
    /// Sets a conditional handle to the value in device memory.
    // SAFETY: matches `set_condition_from(unsigned long long handle, const unsigned* value)`.
    pub SetConditionFrom: (Cond, In<u32>) = unsafe cuda_c(CONDITIONAL_SOURCE, "set_condition_from");
    /// WHILE body: `iterations += 1; counter -= 1; handle = counter > 0`.
    // SAFETY: matches `countdown(unsigned long long handle, int* counter, int* iterations)`.
    pub Countdown: (Cond, Out<i32>, Out<i32>) = unsafe cuda_c(CONDITIONAL_SOURCE, "countdown");
    /// Host-loop step: `counter -= 1; flag = counter > 0`.
    // SAFETY: matches `countdown_flag(int* counter, int* flag)`.
    pub CountdownFlag: (Out<i32>, Out<i32>) = unsafe cuda_c(CONDITIONAL_SOURCE, "countdown_flag");
    /// `visits[slot] += 1`.
    // SAFETY: matches `mark(int* visits, unsigned slot)`; callers keep `slot`
    // within `visits`.
    pub Mark: (Out<i32>, u32) = unsafe cuda_c(CONDITIONAL_SOURCE, "mark");

    /// Launches an exec from the device: mode 0 tail, 1 fire-and-forget, 2 sibling.
    // SAFETY: matches `launch_graph(unsigned long long exec, unsigned mode)`.
    pub LaunchGraph: (ExecParam, u32) = unsafe cuda_c(LAUNCH_SOURCE, "launch_graph");
    /// `steps += 1; counter -= 1;` and tail-relaunches its own graph while `counter > 0`.
    // SAFETY: matches `relaunch_countdown(int* counter, int* steps)`.
    pub RelaunchCountdown: (Out<i32>, Out<i32>) = unsafe cuda_c(LAUNCH_SOURCE, "relaunch_countdown");
}

#[cfg(test)]
mod tests {
    use graph_runtime::kernel::KernelDef;

    fn name<K: KernelDef>() -> &'static str {
        K::DECL.name()
    }

    #[test]
    fn declarations_name_kernels_defined_in_their_sources() {
        let decls = [
            (super::ELEMENTWISE_SOURCE, name::<super::Add>()),
            (super::ELEMENTWISE_SOURCE, name::<super::Scale>()),
            (super::ELEMENTWISE_SOURCE, name::<super::AddOne>()),
            (super::ELEMENTWISE_SOURCE, name::<super::Iota>()),
            (super::ELEMENTWISE_SOURCE, name::<super::SlowFill>()),
            (super::REDUCE_SOURCE, name::<super::ReducePartial>()),
            (super::REDUCE_SOURCE, name::<super::ReduceFinal>()),
            (super::CONDITIONAL_SOURCE, name::<super::SetCondition>()),
            (super::CONDITIONAL_SOURCE, name::<super::SetConditionFrom>()),
            (super::CONDITIONAL_SOURCE, name::<super::Countdown>()),
            (super::CONDITIONAL_SOURCE, name::<super::CountdownFlag>()),
            (super::CONDITIONAL_SOURCE, name::<super::Mark>()),
            (super::LAUNCH_SOURCE, name::<super::LaunchGraph>()),
            (super::LAUNCH_SOURCE, name::<super::RelaunchCountdown>()),
        ];
        for (source, name) in decls {
            assert!(
                source.contains(&format!("__global__ void {name}(")),
                "`{name}` is not defined in its source"
            );
        }
    }
}
