//! The benchmark's graphs, written with `cuda_graph!` as a user would:
//! the perf-scaling chains (`width` chains of `length` tiny kernels, chain
//! `w` on buffer `w`) and the PDL chains, one graph each whatever the
//! shape, built by the loop of a repeated block; and the same chain built
//! through the runtime API, for the build breakdown.

use graph_runtime::cudarc::driver::{CudaContext, CudaSlice};
use graph_runtime::{cuda_graph, EdgeKind, Graph, Result};
use std::sync::Arc;

cuda_graph! {
    /// `xs.len()` chains of `length` AddOne kernels, chain `w` on `xs[w]`.
    pub graph Chains(xs: &mut [CudaSlice<f32>], length: usize) {
        // Each chain has its own buffer.
        #[disjoint(xs)]
        lanes: for w in 0..xs.len() {
            chain: for i in 0..length {
                step: kernel kernels::AddOne<<<1, 32>>>(xs[w], 32u32);
                step[i-1] -> step;
            }
        }
    }

    /// A chain of `length` PDL-aware add-ones joined by full edges.
    pub graph PdlTinyFull(x: &mut CudaSlice<f32>, length: usize) {
        chain: for i in 0..length {
            t: kernel kernels::PdlAddOne<<<1, 32>>>(x, 32u32);
            t[i-1] -> t;
        }
    }

    /// The same joined by programmatic edges.
    pub graph PdlTinyProgrammatic(x: &mut CudaSlice<f32>, length: usize) {
        chain: for i in 0..length {
            t: kernel kernels::PdlAddOne<<<1, 32>>>(x, 32u32);
            #[programmatic]
            t[i-1] -> t;
        }
    }

    /// The same joined by launch-order edges.
    pub graph PdlTinyLaunchOrder(x: &mut CudaSlice<f32>, length: usize) {
        chain: for i in 0..length {
            t: kernel kernels::PdlAddOne<<<1, 32>>>(x, 32u32);
            #[launch_order]
            t[i-1] -> t;
        }
    }

    /// A chain of prologue-heavy PDL-aware kernels joined by full edges.
    pub graph PdlPrologueFull(x: &mut CudaSlice<f32>, blocks: u32, n: u32, work: u32) {
        chain: for i in 0..PDL_PROLOGUE_LENGTH {
            p: kernel kernels::PdlPrologueStep<<<blocks, 256>>>(x, n, work);
            p[i-1] -> p;
        }
    }

    /// The same joined by programmatic edges.
    pub graph PdlPrologueProgrammatic(x: &mut CudaSlice<f32>, blocks: u32, n: u32, work: u32) {
        chain: for i in 0..PDL_PROLOGUE_LENGTH {
            p: kernel kernels::PdlPrologueStep<<<blocks, 256>>>(x, n, work);
            #[programmatic]
            p[i-1] -> p;
        }
    }

    /// The same joined by launch-order edges.
    pub graph PdlPrologueLaunchOrder(x: &mut CudaSlice<f32>, blocks: u32, n: u32, work: u32) {
        chain: for i in 0..PDL_PROLOGUE_LENGTH {
            p: kernel kernels::PdlPrologueStep<<<blocks, 256>>>(x, n, work);
            #[launch_order]
            p[i-1] -> p;
        }
    }
}

/// The length of the prologue-heavy PDL chains.
pub const PDL_PROLOGUE_LENGTH: usize = 100;

/// Builds the `bufs.len()` x `length` chains (`width` is `bufs.len()`).
pub fn build_chain<'a>(
    ctx: &Arc<CudaContext>,
    bufs: &'a mut [CudaSlice<f32>],
    width: usize,
    length: usize,
) -> Result<Graph<'a>> {
    assert_eq!(width, bufs.len(), "one buffer per chain");
    Ok(Chains::build(ctx, bufs, length)?.into_graph())
}

/// Builds the chain of `length` `PdlAddOne` kernels joined by `kind` edges.
pub fn build_pdl_tiny<'a>(
    ctx: &Arc<CudaContext>,
    x: &'a mut CudaSlice<f32>,
    kind: EdgeKind,
    length: usize,
) -> Result<Graph<'a>> {
    Ok(match kind {
        EdgeKind::Full => PdlTinyFull::build(ctx, x, length)?.into_graph(),
        EdgeKind::Programmatic => PdlTinyProgrammatic::build(ctx, x, length)?.into_graph(),
        EdgeKind::LaunchOrder => PdlTinyLaunchOrder::build(ctx, x, length)?.into_graph(),
        // EdgeKind is non_exhaustive.
        other => unreachable!("no chain of {other:?} edges"),
    })
}

/// Builds the chain of `PdlPrologueStep` kernels joined by `kind` edges.
pub fn build_pdl_prologue<'a>(
    ctx: &Arc<CudaContext>,
    x: &'a mut CudaSlice<f32>,
    kind: EdgeKind,
    blocks: u32,
    n: u32,
    work: u32,
) -> Result<Graph<'a>> {
    Ok(match kind {
        EdgeKind::Full => PdlPrologueFull::build(ctx, x, blocks, n, work)?.into_graph(),
        EdgeKind::Programmatic => {
            PdlPrologueProgrammatic::build(ctx, x, blocks, n, work)?.into_graph()
        }
        EdgeKind::LaunchOrder => {
            PdlPrologueLaunchOrder::build(ctx, x, blocks, n, work)?.into_graph()
        }
        other => unreachable!("no chain of {other:?} edges"),
    })
}

/// A chain of `length` AddOne nodes on `buf` through the runtime API
/// (`Graph::add_kernel` in a loop), for the benchmark's build breakdown.
pub fn runtime_api_chain<'a>(
    ctx: &Arc<CudaContext>,
    buf: &'a mut CudaSlice<f32>,
    kernel: &graph_runtime::Kernel<<kernels::AddOne as graph_runtime::kernel::KernelDef>::Args>,
    length: usize,
) -> Result<Graph<'a>> {
    let mut graph = Graph::new(ctx)?;
    let x = graph.bind_mut(buf);
    let mut prev: Option<graph_runtime::Node> = None;
    for i in 0..length {
        let deps: &[graph_runtime::Node] = match &prev {
            Some(p) => std::slice::from_ref(p),
            None => &[],
        };
        let node = graph.add_kernel(
            if i == 0 { "first" } else { "next" },
            kernel,
            graph_runtime::LaunchConfig::new(1, 32),
            (x, 32),
            deps,
        )?;
        prev = Some(node.node());
    }
    Ok(graph)
}
