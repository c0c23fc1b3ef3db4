//! The CUDA C kernels the examples, tests and benchmarks use, embedded with
//! `include_str!` and compiled by NVRTC on first use (once per context), each
//! declared as a type with its parameter types: a kernel node's arguments are
//! checked by rustc against them. Declare your own kernels the same way, in
//! one statement:
//!
//! ```
//! use graph_runtime::kernel::{Len, Out};
//! const SOURCE: &str = r#"extern "C" __global__ void zero(float* x, unsigned n) {
//!     unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = 0.0f; }"#;
//! graph_runtime::declare_kernel! {
//!     // SAFETY: `zero` takes (float*, unsigned) and writes only x[0..n]; n is
//!     // a `Len`, which the runtime checks against x's length.
//!     pub Zero: (Out<f32>, Len) = unsafe cuda_c(SOURCE, "zero");
//! }
//! ```
//!
//! (`unsafe ptx(TEXT, NAME)` and `unsafe cubin(BYTES, NAME)` take precompiled
//! code, and `Kernel::from_function` wraps a cudarc `CudaFunction` already
//! loaded.)
//!
//! A kernel that follows a programmatic dependent launch edge calls
//! `pdl_wait()` before touching its predecessor's memory, and may call
//! `pdl_trigger()` to let its own dependents launch early. Both come from
//! the PDL prelude, which compiles under NVRTC without headers (sm_90 and
//! newer); [`with_pdl!`] prepends it to a source:
//!
//! ```
//! use graph_runtime::kernel::{Len, Out};
//! const SOURCE: &str = kernels::with_pdl!(r#"extern "C" __global__ void bump(float* x, unsigned n) {
//!     pdl_wait();
//!     unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }"#);
//! graph_runtime::declare_kernel! {
//!     // SAFETY: matches `bump(float*, unsigned)`; touches only x[..n], and
//!     // only after every thread has called pdl_wait().
//!     pub Bump: (Out<f32>, Len) = unsafe pdl_aware cuda_c(SOURCE, "bump");
//! }
//! assert!(SOURCE.starts_with(kernels::PDL_PRELUDE));
//! ```

use graph_runtime::kernel::{
    Cond, Count, ExecParam, In, InFirst, InLen, Index, Len, Out, OutFirst, OutLen, OutPerBlock,
};

/// Elementwise kernels (`cuda/elementwise.cu`).
pub const ELEMENTWISE_SOURCE: &str = include_str!("../cuda/elementwise.cu");
/// Two-stage reduction (`cuda/reduce.cu`).
pub const REDUCE_SOURCE: &str = include_str!("../cuda/reduce.cu");
/// Conditional-node drivers (`cuda/conditional.cu`).
pub const CONDITIONAL_SOURCE: &str = include_str!("../cuda/conditional.cu");
/// Device graph launch (`cuda/launch.cu`).
pub const LAUNCH_SOURCE: &str = include_str!("../cuda/launch.cu");
/// The Jacobi solver's kernels (`cuda/jacobi.cu`; see [`jacobi`]).
pub const JACOBI_SOURCE: &str = include_str!("../cuda/jacobi.cu");
/// Vector steps around library calls (`cuda/linalg.cu`).
pub const LINALG_SOURCE: &str = include_str!("../cuda/linalg.cu");
/// Sparse matrix kernels (`cuda/sparse.cu`).
pub const SPARSE_SOURCE: &str = include_str!("../cuda/sparse.cu");
/// Programmatic dependent launch chains (`cuda/pdl.cu`, after the prelude).
pub const PDL_SOURCE: &str = with_pdl!(include_str!("../cuda/pdl.cu"));

/// The PDL prelude as a string literal, for `concat!`: two one-line device
/// functions in inline PTX (NVRTC has no CUDA headers, where
/// `cudaGridDependencySynchronize` lives). Needs sm_90 or newer.
///
/// - `pdl_wait()` (`griddepcontrol.wait`): returns once every grid before a
///   programmatic edge into this kernel has completed and its writes are
///   visible; a no-op without such an edge. Every thread of a PDL-aware
///   kernel calls it, unconditionally, before touching memory a
///   predecessor touches, setting a conditional handle or launching a
///   graph (so the kernel acts and completes after its predecessors).
/// - `pdl_trigger()` (`griddepcontrol.launch_dependents`): lets the kernels
///   after this one's `-(programmatic)->` edges launch before it finishes
///   (they still wait for its completion in `pdl_wait()`).
#[macro_export]
macro_rules! pdl_prelude {
    () => {
        "// PDL prelude (kernels::pdl_prelude!)\n\
         #ifndef CUDA_GRAPH_PDL_PRELUDE\n\
         #define CUDA_GRAPH_PDL_PRELUDE\n\
         __device__ __forceinline__ void pdl_wait() { asm volatile(\"griddepcontrol.wait;\" ::: \"memory\"); }\n\
         __device__ __forceinline__ void pdl_trigger() { asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\"); }\n\
         #endif\n"
    };
}

/// CUDA C source literals with the [PDL prelude](pdl_prelude) prepended:
/// `with_pdl!(include_str!("my_kernels.cu"))`.
#[macro_export]
macro_rules! with_pdl {
    ($($source:tt)+) => {
        concat!($crate::pdl_prelude!(), $($source)+)
    };
}

/// The [PDL prelude](pdl_prelude) as a constant.
pub const PDL_PRELUDE: &str = pdl_prelude!();

graph_runtime::kernel_struct! {
    /// A CSR matrix of `n` rows and `nnz` stored values, as
    /// `csr_spmv_struct` takes it by value: `struct Csr { const unsigned*
    /// offsets; const unsigned* cols; const float* values; unsigned n;
    /// unsigned nnz; }`.
    pub struct Csr {
        offsets: InLen<u32, 0, 1>,
        cols: InLen<u32, 1>,
        values: InLen<f32, 1>,
        n: Count<0>,
        nnz: Count<1>,
    }
}

// Each declaration's SAFETY comment gives the CUDA C signature it matches.
// What a kernel touches is bounded by something the runtime checks: below
// its `Len` argument (checked against every `In`/`Out` buffer), at its
// `Index` argument, below its `Count<C>` argument (plus PLUS) in an
// `InLen`/`OutLen` buffer, the first N elements of an `InFirst`/`OutFirst` buffer,
// or one element per block of an `OutPerBlock` buffer. No safe caller can
// choose a length, index or grid that pushes a kernel out of bounds.
graph_runtime::declare_kernel! {
    /// `out[i] = a[i] + b[i]` for `i < n`.
    // SAFETY: matches `add(const float* a, const float* b, float* out, unsigned n)`.
    pub Add: (In<f32>, In<f32>, Out<f32>, Len) = unsafe cuda_c(ELEMENTWISE_SOURCE, "add");
    /// `x[i] *= factor` for `i < n`.
    // SAFETY: matches `scale(float* x, float factor, unsigned n)`.
    pub Scale: (Out<f32>, f32, Len) = unsafe cuda_c(ELEMENTWISE_SOURCE, "scale");
    /// `x[i] += 1` for `i < n`: the tiny kernel of the benchmarks.
    // SAFETY: matches `add_one(float* x, unsigned n)`.
    pub AddOne: (Out<f32>, Len) = unsafe cuda_c(ELEMENTWISE_SOURCE, "add_one");
    /// `x[i] = i` for `i < n`.
    // SAFETY: matches `iota(float* x, unsigned n)`.
    pub Iota: (Out<f32>, Len) = unsafe cuda_c(ELEMENTWISE_SOURCE, "iota");
    /// Spins about `cycles` clock cycles, then sets `x[..n] = value`.
    // SAFETY: matches `slow_fill(float* x, float value, unsigned n, long long cycles)`.
    pub SlowFill: (Out<f32>, f32, Len, i64) = unsafe cuda_c(ELEMENTWISE_SOURCE, "slow_fill");

    /// Stage 1: one partial sum per block (at most 256 threads per block) into
    /// `partial[blockIdx.x]`.
    // SAFETY: matches `reduce_partial(const float* x, double* partial, unsigned n)`;
    // reads x below n, writes partial[blockIdx.x] (one element per block), and
    // returns at once from blocks of more than 256 threads (its shared array).
    pub ReducePartial: (In<f32>, OutPerBlock<f64>, Len) = unsafe cuda_c(REDUCE_SOURCE, "reduce_partial");
    /// Stage 2: `*out = sum(partial[..count])` (one block of at most 256 threads).
    // SAFETY: matches `reduce_final(const double* partial, double* out, unsigned count)`;
    // reads partial below count, writes out[0] from block 0 alone, and
    // returns at once from other blocks and from blocks of more than 256
    // threads. `out` overlapping `partial` would race: no_alias.
    pub ReduceFinal: (In<f64>, OutFirst<f64, 1>, Len) = unsafe no_alias cuda_c(REDUCE_SOURCE, "reduce_final");

    /// Sets a conditional handle to `value`.
    // SAFETY: matches `set_condition(unsigned long long handle, unsigned value)`.
    pub SetCondition: (Cond, u32) = unsafe cuda_c(CONDITIONAL_SOURCE, "set_condition");
    /// Sets a conditional handle to the value in device memory.
    // SAFETY: matches `set_condition_from(unsigned long long handle, const unsigned* value)`.
    pub SetConditionFrom: (Cond, InFirst<u32, 1>) = unsafe cuda_c(CONDITIONAL_SOURCE, "set_condition_from");
    /// WHILE body: `iterations += 1; counter -= 1; handle = counter > 0`.
    // SAFETY: matches `countdown(unsigned long long handle, int* counter, int* iterations)`.
    pub Countdown: (Cond, OutFirst<i32, 1>, OutFirst<i32, 1>) = unsafe cuda_c(CONDITIONAL_SOURCE, "countdown");
    /// WHILE body: `counter -= 1; handle = counter > 0`.
    // SAFETY: matches `countdown_step(unsigned long long handle, int* counter)`.
    pub CountdownStep: (Cond, OutFirst<i32, 1>) = unsafe cuda_c(CONDITIONAL_SOURCE, "countdown_step");
    /// Host-loop step: `counter -= 1; flag = counter > 0`.
    // SAFETY: matches `countdown_flag(int* counter, int* flag)`.
    pub CountdownFlag: (OutFirst<i32, 1>, OutFirst<i32, 1>) = unsafe cuda_c(CONDITIONAL_SOURCE, "countdown_flag");
    /// `visits[slot] += 1`.
    // SAFETY: matches `mark(int* visits, unsigned slot)`; touches visits[slot] only.
    pub Mark: (Out<i32>, Index) = unsafe cuda_c(CONDITIONAL_SOURCE, "mark");

    /// One Jacobi sweep of `-Laplace(u) = f`: `out = (u's four neighbours + h2 f) / 4`
    /// inside a grid of `width` columns, 0 on its boundary (see [`jacobi`]).
    // SAFETY: matches `jacobi_sweep(const float* u, const float* f, float* out,
    // unsigned width, float h2, unsigned len)`; touches indices below len (a
    // Len) only: interior points' neighbours are inside the grid. `out`
    // overlapping `u` would race (a thread writes out[i] while others read
    // its neighbours): no_alias has the runtime refuse it.
    pub JacobiSweep: (In<f32>, In<f32>, Out<f32>, u32, f32, Len) = unsafe no_alias cuda_c(JACOBI_SOURCE, "jacobi_sweep");
    /// `out[0] += sum((a - b)^2)` in f64 (blocks of whole warps; zero `out` first).
    // SAFETY: matches `sq_diff_sum(const float* a, const float* b, double* out,
    // unsigned len)`; reads a and b below len, writes out[0] only (atomically),
    // and returns at once from blocks that are not whole warps in x (its
    // full-warp shuffles).
    pub SqDiffSum: (In<f32>, In<f32>, OutFirst<f64, 1>, Len) = unsafe cuda_c(JACOBI_SOURCE, "sq_diff_sum");
    /// WHILE test of the device solver: `iterations += 1`; go on while
    /// `residual > tol2` and `iterations < limit`.
    // SAFETY: matches `jacobi_continue(unsigned long long handle, const double*
    // residual, unsigned* iterations, double tol2, unsigned limit)`; touches
    // residual[0] and iterations[0] only.
    pub JacobiContinue: (Cond, InFirst<f64, 1>, OutFirst<u32, 1>, f64, u32) = unsafe cuda_c(JACOBI_SOURCE, "jacobi_continue");

    /// WHILE body of a power iteration: `x = y / |y|` for `i < n`, then
    /// `counter -= 1; handle = counter > 0` (one block of 32 threads).
    // SAFETY: matches `normalize_step(unsigned long long handle, const float* y,
    // float* x, int* counter, unsigned n)`; touches y and x below n (a Len),
    // counter[0] only, and returns at once unless in block 0 of exactly 32
    // threads (its full-warp shuffles).
    pub NormalizeStep: (Cond, In<f32>, Out<f32>, OutFirst<i32, 1>, Len) = unsafe cuda_c(LINALG_SOURCE, "normalize_step");

    /// `y = A x` for a CSR matrix of `n` rows, `nnz` stored values and `m`
    /// columns: buffers of four lengths, tied to three counts.
    // SAFETY: matches `csr_spmv(const unsigned* row_offsets, const unsigned*
    // cols, const float* values, const float* x, float* y, unsigned n,
    // unsigned nnz, unsigned m)`; reads row_offsets[..n + 1], cols and values
    // below nnz (it clamps the offsets it reads to nnz), x at column indices
    // it checks below m, and writes y[..n]; y overlapping another buffer
    // would race (a thread writes y[row] while others read x[c]): no_alias
    // has the runtime refuse it.
    pub CsrSpmv: (InLen<u32, 0, 1>, InLen<u32, 1>, InLen<f32, 1>, InLen<f32, 2>, OutLen<f32, 0>,
                  Count<0>, Count<1>, Count<2>) = unsafe no_alias cuda_c(SPARSE_SOURCE, "csr_spmv");

    /// [`CsrSpmv`] over a matrix passed by value as a struct ([`Csr`]).
    // SAFETY: matches `csr_spmv_struct(Csr a, const float* x, float* y,
    // unsigned m)` with `struct Csr { const unsigned* offsets; const
    // unsigned* cols; const float* values; unsigned n; unsigned nnz; }`
    // (laid out as `Csr`'s fields); touches what CsrSpmv does, and is
    // declared no_alias for the same reason.
    pub CsrSpmvStruct: (Csr<'static>, InLen<f32, 2>, OutLen<f32, 0>, Count<2>) =
        unsafe no_alias cuda_c(SPARSE_SOURCE, "csr_spmv_struct");

    /// Launches an exec from the device: mode 0 tail, 1 fire-and-forget, 2 sibling.
    // SAFETY: matches `launch_graph(unsigned long long exec, unsigned mode)`.
    pub LaunchGraph: (ExecParam, u32) = unsafe cuda_c(LAUNCH_SOURCE, "launch_graph");
    /// `steps += 1; counter -= 1;` and tail-relaunches its own graph while `counter > 0`.
    // SAFETY: matches `relaunch_countdown(int* counter, int* steps)`.
    pub RelaunchCountdown: (OutFirst<i32, 1>, OutFirst<i32, 1>) = unsafe cuda_c(LAUNCH_SOURCE, "relaunch_countdown");

    /// `x[i] += 1` for `i < n` after its predecessor: the tiny kernel of PDL chains.
    // SAFETY: matches `pdl_add_one(float* x, unsigned n)`; every thread calls
    // pdl_wait() before touching x.
    pub PdlAddOne: (Out<f32>, Len) = unsafe pdl_aware cuda_c(PDL_SOURCE, "pdl_add_one");
    /// An independent prologue of `work` steps, then `x[i] = x[i] * 0.5 + prologue`
    /// after its predecessor (the prologue-heavy kernel of PDL chains).
    // SAFETY: matches `pdl_prologue_step(float* x, unsigned n, unsigned work)`;
    // the prologue touches only registers, and every thread calls pdl_wait()
    // before touching x.
    pub PdlPrologueStep: (Out<f32>, Len, u32) = unsafe pdl_aware cuda_c(PDL_SOURCE, "pdl_prologue_step");
}

pub mod blas;

/// The Jacobi solver's problem and its CPU reference (what [`JacobiSweep`]
/// computes, in the same order, in f32).
pub mod jacobi {
    /// A square `n x n` grid on the unit square: spacing `h = 1 / (n - 1)`,
    /// `f = 1` everywhere, `u = 0` on the boundary.
    #[derive(Debug, Clone, Copy)]
    pub struct Problem {
        pub n: u32,
    }

    impl Problem {
        pub fn len(&self) -> usize {
            (self.n * self.n) as usize
        }

        pub fn is_empty(&self) -> bool {
            self.n == 0
        }

        /// `h^2`, the sweep's factor of `f`.
        pub fn h2(&self) -> f32 {
            let h = 1.0 / (self.n.max(2) - 1) as f32;
            h * h
        }

        /// The right-hand side.
        pub fn f(&self) -> Vec<f32> {
            vec![1.0; self.len()]
        }

        /// `sweeps` Jacobi sweeps from `u = 0`, on the CPU.
        pub fn cpu(&self, sweeps: usize) -> Vec<f32> {
            let (w, len, h2) = (self.n as usize, self.len(), self.h2());
            let f = self.f();
            let mut u = vec![0.0f32; len];
            let mut v = vec![0.0f32; len];
            for _ in 0..sweeps {
                for i in 0..len {
                    let (row, col) = (i / w, i % w);
                    v[i] = if row == 0 || col == 0 || row + 1 >= w || col + 1 == w {
                        0.0
                    } else {
                        0.25 * (u[i - 1] + u[i + 1] + u[i - w] + u[i + w] + h2 * f[i])
                    };
                }
                std::mem::swap(&mut u, &mut v);
            }
            u
        }
    }
}

/// What [`PdlPrologueStep`] computes before it waits, for thread `i`: the
/// value a test checks its results against, bit for bit.
pub fn pdl_prologue(i: u32, work: u32) -> f32 {
    let mut acc = (i & 1023) as f32 * 0.001;
    for _ in 0..work {
        acc = acc.mul_add(0.999, 0.5);
    }
    acc
}

#[cfg(test)]
mod tests {
    use graph_runtime::kernel::{KernelDef, PdlAware};

    fn pdl_aware<K: PdlAware>() -> bool {
        K::DECL.is_pdl_aware()
    }

    #[test]
    fn pdl_kernels_are_declared_pdl_aware_and_wait() {
        assert!(pdl_aware::<super::PdlAddOne>());
        assert!(pdl_aware::<super::PdlPrologueStep>());
        assert!(!super::AddOne::DECL.is_pdl_aware());
        assert!(super::PDL_SOURCE.starts_with(super::PDL_PRELUDE));
        // Every PDL kernel calls pdl_wait() before it touches memory.
        let body = &super::PDL_SOURCE[super::PDL_PRELUDE.len()..];
        for kernel in body.split("extern \"C\"").skip(1) {
            let wait = kernel.find("pdl_wait();").expect("a PDL kernel waits");
            assert!(
                !kernel[..wait].contains("x[i]"),
                "touches x before waiting: {kernel}"
            );
        }
    }

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
            (super::CONDITIONAL_SOURCE, name::<super::CountdownStep>()),
            (super::CONDITIONAL_SOURCE, name::<super::CountdownFlag>()),
            (super::CONDITIONAL_SOURCE, name::<super::Mark>()),
            (super::JACOBI_SOURCE, name::<super::JacobiSweep>()),
            (super::JACOBI_SOURCE, name::<super::SqDiffSum>()),
            (super::JACOBI_SOURCE, name::<super::JacobiContinue>()),
            (super::LINALG_SOURCE, name::<super::NormalizeStep>()),
            (super::LAUNCH_SOURCE, name::<super::LaunchGraph>()),
            (super::LAUNCH_SOURCE, name::<super::RelaunchCountdown>()),
            (super::PDL_SOURCE, name::<super::PdlAddOne>()),
            (super::PDL_SOURCE, name::<super::PdlPrologueStep>()),
        ];
        for (source, name) in decls {
            assert!(
                source.contains(&format!("__global__ void {name}(")),
                "`{name}` is not defined in its source"
            );
        }
    }
}
