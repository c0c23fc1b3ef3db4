//! The kernels the documentation's examples name as `kernels::...`
//! (`use graph_runtime::__doc_kernels as kernels;`, hidden in each
//! example), so that the examples compile from the published crate alone.
//! Not an API: declare your own kernels (crate docs, "Kernels of your own").

// The `unsafe` in `declare_kernel!` covers the declaration's promise, made
// in the SAFETY comments below (clippy checks the macro's expansions in the
// crate that defines it).
#![allow(clippy::macro_metavars_in_unsafe)]

use crate::kernel::{Cond, In, Index, Len, Out, OutFirst, OutPerBlock};

const SOURCE: &str = include_str!("../docs/doc_kernels.cu");

// Each SAFETY comment gives the CUDA C signature the declaration matches;
// what each kernel touches is bounded by a checked `Len`/`Index`, the first
// element of an `OutFirst` buffer, or one element per block.
crate::declare_kernel! {
    // SAFETY: `add(const float*, const float*, float*, unsigned n)`, below n.
    pub Add: (In<f32>, In<f32>, Out<f32>, Len) = unsafe cuda_c(SOURCE, "add");
    // SAFETY: `scale(float*, float, unsigned n)`, below n.
    pub Scale: (Out<f32>, f32, Len) = unsafe cuda_c(SOURCE, "scale");
    // SAFETY: `add_one(float*, unsigned n)`, below n.
    pub AddOne: (Out<f32>, Len) = unsafe cuda_c(SOURCE, "add_one");
    // SAFETY: `iota(float*, unsigned n)`, below n.
    pub Iota: (Out<f32>, Len) = unsafe cuda_c(SOURCE, "iota");
    // SAFETY: `reduce_partial(const float*, double*, unsigned n)`: reads below
    // n, writes partial[blockIdx.x]; returns from blocks over 256 threads.
    pub ReducePartial: (In<f32>, OutPerBlock<f64>, Len) = unsafe cuda_c(SOURCE, "reduce_partial");
    // SAFETY: `reduce_final(const double*, double*, unsigned count)`: reads
    // below count, writes out[0] from block 0 alone; returns from other
    // blocks and from blocks over 256 threads; no_alias: out overlapping
    // partial would race.
    pub ReduceFinal: (In<f64>, OutFirst<f64, 1>, Len) = unsafe no_alias cuda_c(SOURCE, "reduce_final");
    // SAFETY: `set_condition(cudaGraphConditionalHandle, unsigned)`.
    pub SetCondition: (Cond, u32) = unsafe cuda_c(SOURCE, "set_condition");
    // SAFETY: `countdown(cudaGraphConditionalHandle, int*, int*)`, element 0 of each.
    pub Countdown: (Cond, OutFirst<i32, 1>, OutFirst<i32, 1>) = unsafe cuda_c(SOURCE, "countdown");
    // SAFETY: `countdown_step(cudaGraphConditionalHandle, int*)`, element 0.
    pub CountdownStep: (Cond, OutFirst<i32, 1>) = unsafe cuda_c(SOURCE, "countdown_step");
    // SAFETY: `mark(int* visits, unsigned slot)`, visits[slot] only.
    pub Mark: (Out<i32>, Index) = unsafe cuda_c(SOURCE, "mark");
    // SAFETY: `pdl_add_one(float*, unsigned n)`, below n; every thread
    // executes `griddepcontrol.wait` before touching x.
    pub PdlAddOne: (Out<f32>, Len) = unsafe pdl_aware cuda_c(SOURCE, "pdl_add_one");
}
