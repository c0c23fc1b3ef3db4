//! Build + instantiate of one shape, variant against variant, in many
//! rotating rounds: where the macro's gap to C++ lies (its build, its
//! instantiate's wrapper, the driver call its nodes are added with), and
//! how far two runs of the same C++ code land apart under the same
//! estimator (the noise floor of the scaling table's ratios).

use super::macro_build_once;
use super::raw::{raw_build, raw_instantiate, RawAdd};
use crate::cpp::CppLib;
use crate::timing::{median, paired_median, time_us, Result};
use graph_runtime::cudarc::driver::{sys, CudaContext, CudaSlice, CudaStream};
use graph_runtime::kernel::KernelDef;
use std::fmt::Write;
use std::sync::Arc;

/// The variants, in column order; the ratios are against `C++` (index 4).
pub const AB_VARIANTS: [&str; 6] = [
    "macro",
    "macro's graph, raw instantiate",
    "raw, generic add",
    "raw, kernel-node add",
    "C++",
    "C++ again",
];
const CPP: usize = 4;

/// Measures `rounds` rounds of every variant (the order rotating from
/// round to round) on `bufs.len()` x `length` chains; returns a Markdown
/// table and the raw samples.
pub fn build_ab(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    cpp: &CppLib,
    bufs: &mut [CudaSlice<f32>],
    length: usize,
    rounds: usize,
) -> Result<(String, String)> {
    let width = bufs.len();
    let ptrs: Vec<u64> = bufs.iter().map(|b| super::device_ptr(b, stream)).collect();
    let function = kernels::AddOne::load(ctx)?.function().cu_function();
    let mut samples: Vec<Vec<(f64, f64)>> = vec![Vec::new(); AB_VARIANTS.len()];
    for round in 0..rounds {
        for k in 0..AB_VARIANTS.len() {
            let v = (k + round) % AB_VARIANTS.len();
            let sample = match v {
                0 => macro_build_once(ctx, bufs, length)?,
                1 => {
                    let (build, graph) =
                        time_us(|| Ok(crate::chains::build_chain(ctx, bufs, width, length)?))?;
                    let (instantiate, exec) = time_us(|| instantiate_raw(graph.cu_graph()))?;
                    // SAFETY: made above, never launched, destroyed once.
                    unsafe { sys::cuGraphExecDestroy(exec) }.result()?;
                    drop(graph);
                    (build, instantiate)
                }
                2 | 3 => {
                    let call = if v == 2 {
                        RawAdd::Generic
                    } else {
                        RawAdd::KernelNode
                    };
                    let (build, mut raw) = time_us(|| raw_build(function, &ptrs, length, call))?;
                    let (instantiate, ()) = time_us(|| raw_instantiate(&mut raw))?;
                    (build, instantiate)
                }
                _ => cpp.build_once(width, length, &ptrs)?,
            };
            samples[v].push(sample);
        }
    }
    let mut table = String::from(
        "| variant | build | instantiate | build + instantiate | : C++ |\n| --- | --- | --- | --- | --- |\n",
    );
    for (v, name) in AB_VARIANTS.iter().enumerate() {
        let s = &samples[v];
        let build = median(s.iter().map(|x| x.0).collect());
        let instantiate = median(s.iter().map(|x| x.1).collect());
        let total = median(s.iter().map(|x| x.0 + x.1).collect());
        let ratio = paired_median(s, &samples[CPP], |a, b| (a.0 + a.1) / (b.0 + b.1));
        let _ = writeln!(
            table,
            "| {name} | {build:.3} | {instantiate:.3} | {total:.3} | {ratio:.3} |"
        );
    }
    let raw = format!(
        "{width}x{length} A/B rounds (build, instantiate) per variant {AB_VARIANTS:?}: {samples:?}\n"
    );
    Ok((table, raw))
}

/// `cuGraphInstantiateWithParams` on `graph` with flags 0, nothing else.
fn instantiate_raw(graph: sys::CUgraph) -> Result<sys::CUgraphExec> {
    let mut params = sys::CUDA_GRAPH_INSTANTIATE_PARAMS {
        flags: 0,
        hUploadStream: std::ptr::null_mut(),
        hErrNode_out: std::ptr::null_mut(),
        result_out: sys::CUgraphInstantiateResult::CUDA_GRAPH_INSTANTIATE_SUCCESS,
    };
    let mut exec = std::ptr::null_mut();
    // SAFETY: the graph is live (borrowed by the caller's Graph).
    unsafe { sys::cuGraphInstantiateWithParams(&mut exec, graph, &mut params) }.result()?;
    Ok(exec)
}
