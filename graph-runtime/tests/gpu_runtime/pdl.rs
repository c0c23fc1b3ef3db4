//! Programmatic dependent launch edges: results bit-identical to ordinary
//! edges for tiny and prologue-heavy kernels, updates of such graphs, and
//! the refusal of a programmatic edge into a kernel not declared PDL-aware.

use crate::common::{gpu, sync};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use graph_runtime::kernel::{KernelArgs, KernelDef};
use graph_runtime::{cudarc, EdgeKind, Graph, GraphError, Kernel, KernelNode, LaunchConfig};
use std::sync::Arc;

const KINDS: [EdgeKind; 3] = [
    EdgeKind::Full,
    EdgeKind::Programmatic,
    EdgeKind::LaunchOrder,
];

/// A chain of `len` nodes of `kernel` joined by `kind` edges; `args` gives
/// each node's arguments from the graph's binding of `x`.
fn chain<'a, A: KernelArgs>(
    ctx: &Arc<CudaContext>,
    kernel: &Kernel<A>,
    config: LaunchConfig,
    x: &'a mut CudaSlice<f32>,
    kind: EdgeKind,
    len: usize,
    args: impl Fn(graph_runtime::Buf<'a, f32>) -> A::Args<'a>,
) -> (Graph<'a>, Vec<KernelNode<A>>, graph_runtime::Buf<'a, f32>) {
    let mut g = Graph::new(ctx).unwrap();
    let xb = g.bind_mut(x);
    let mut nodes: Vec<KernelNode<A>> = Vec::with_capacity(len);
    for i in 0..len {
        let deps: Vec<_> = nodes.last().map(|n| n.node()).into_iter().collect();
        let edges = [kind];
        let node = g
            .add_kernel_with_edges(
                &format!("step{i}"),
                kernel,
                config,
                args(xb),
                &deps,
                (!deps.is_empty()).then_some(&edges[..]),
            )
            .unwrap();
        nodes.push(node);
    }
    (g, nodes, xb)
}

/// Runs the chain built by `build` for each edge kind on `x0`; returns each
/// kind's result.
fn run_each_kind(
    stream: &Arc<CudaStream>,
    x0: &[f32],
    launches: usize,
    build: impl for<'a> Fn(&'a mut CudaSlice<f32>, EdgeKind) -> Graph<'a>,
) -> Vec<Vec<f32>> {
    KINDS
        .iter()
        .map(|&kind| {
            let mut x = stream.clone_htod(x0).unwrap();
            {
                let g = build(&mut x, kind);
                let mut exec = g.instantiate().unwrap();
                for _ in 0..launches {
                    exec.launch(stream).unwrap();
                }
                sync(stream);
            }
            stream.clone_dtoh(&x).unwrap()
        })
        .collect()
}

fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn tiny_chains_match_ordinary_edges_bit_for_bit() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let kernel = kernels::PdlAddOne::load(&ctx).unwrap();
    let n = 128u32;
    let x0: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let (len, launches) = (1000, 3);
    let results = run_each_kind(&stream, &x0, launches, |x, kind| {
        chain(&ctx, &kernel, LaunchConfig::new(1, n), x, kind, len, |xb| {
            (xb, n)
        })
        .0
    });
    let expected: Vec<f32> = x0.iter().map(|v| v + (len * launches) as f32).collect();
    for (kind, result) in KINDS.iter().zip(&results) {
        assert_eq!(bits(result), bits(&expected), "{kind:?} edges");
    }
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn prologue_heavy_chains_match_ordinary_edges_bit_for_bit() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let kernel = kernels::PdlPrologueStep::load(&ctx).unwrap();
    let (blocks, threads, work, len) = (132u32, 256u32, 512u32, 64);
    let n = blocks * threads;
    let x0: Vec<f32> = (0..n).map(|i| (i % 977) as f32 * 0.25).collect();
    let config = LaunchConfig::new(blocks, threads);
    let results = run_each_kind(&stream, &x0, 1, |x, kind| {
        chain(&ctx, &kernel, config, x, kind, len, |xb| (xb, n, work)).0
    });
    // The host computes the same fused multiply-adds, so it matches exactly.
    let expected: Vec<f32> = x0
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let prologue = kernels::pdl_prologue(i as u32, work);
            (0..len).fold(v, |x, _| x.mul_add(0.5, prologue))
        })
        .collect();
    for (kind, result) in KINDS.iter().zip(&results) {
        assert_eq!(bits(result), bits(&expected), "{kind:?} edges");
    }
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn pdl_graphs_take_per_node_and_whole_graph_updates() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let kernel = kernels::PdlAddOne::load(&ctx).unwrap();
    let n = 256u32;
    let config = LaunchConfig::new(1, n);
    let mut x = stream.alloc_zeros::<f32>(n as usize).unwrap();
    let mut y = stream.alloc_zeros::<f32>(n as usize).unwrap();
    {
        let (g, nodes, xb) = chain(
            &ctx,
            &kernel,
            config,
            &mut x,
            EdgeKind::LaunchOrder,
            10,
            |xb| (xb, n),
        );
        let mut exec = g.instantiate().unwrap();
        // Per node: the last step adds to the first half only.
        exec.set_kernel_args(&nodes[9], (xb, n / 2)).unwrap();
        exec.launch(&stream).unwrap();
        sync(&stream);
        // Whole graph: the same topology over `y`, programmatic edges kept.
        let (other, _, _) = chain(
            &ctx,
            &kernel,
            config,
            &mut y,
            EdgeKind::LaunchOrder,
            10,
            |yb| (yb, n),
        );
        exec.update(&other).unwrap();
        exec.launch(&stream).unwrap();
        exec.launch(&stream).unwrap();
        sync(&stream);
    }
    let x = stream.clone_dtoh(&x).unwrap();
    assert!(x[..128].iter().all(|v| *v == 10.0) && x[128..].iter().all(|v| *v == 9.0));
    assert!(stream.clone_dtoh(&y).unwrap().iter().all(|v| *v == 20.0));
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn programmatic_edge_into_a_kernel_not_pdl_aware_is_refused() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let pdl = kernels::PdlAddOne::load(&ctx).unwrap();
    let plain = kernels::AddOne::load(&ctx).unwrap();
    let mut x = stream.alloc_zeros::<f32>(32).unwrap();
    let mut g = Graph::new(&ctx).unwrap();
    let xb = g.bind_mut(&mut x);
    let first = g
        .add_kernel("first", &pdl, LaunchConfig::new(1, 32), (xb, 32), &[])
        .unwrap();
    for kind in [EdgeKind::Programmatic, EdgeKind::LaunchOrder] {
        let err = g
            .add_kernel_with_edges(
                "second",
                &plain,
                LaunchConfig::new(1, 32),
                (xb, 32),
                &[first.node()],
                Some(&[kind]),
            )
            .unwrap_err();
        assert!(
            matches!(&err, GraphError::Unsupported {
                    label: Some(label),
                    what: graph_runtime::error::Unsupported::NotPdlAware { .. },
                    ..
                } if label == "second"),
            "{err}"
        );
    }
    // An ordinary edge into it is fine, and so is a PDL-aware kernel.
    g.add_kernel_with_edges(
        "third",
        &plain,
        LaunchConfig::new(1, 32),
        (xb, 32),
        &[first.node()],
        Some(&[EdgeKind::Full]),
    )
    .unwrap();
    assert_eq!(g.node_count(), 2);
}

/// The (from port, dependency type) of every edge of `g`, as the driver
/// reports them.
fn driver_edge_data(g: &Graph<'_>) -> Vec<(u8, u8)> {
    use cudarc::driver::sys;
    let mut count = 0usize;
    let null = std::ptr::null_mut();
    // SAFETY: the graph is live; null arrays ask for the edge count.
    unsafe { sys::cuGraphGetEdges_v2(g.cu_graph(), null, null, std::ptr::null_mut(), &mut count) }
        .result()
        .unwrap();
    let mut from = vec![std::ptr::null_mut(); count];
    let mut to = vec![std::ptr::null_mut(); count];
    // SAFETY: a zeroed edge-data struct is valid (plain integers).
    let mut data: Vec<sys::CUgraphEdgeData> = vec![unsafe { std::mem::zeroed() }; count];
    // SAFETY: each array holds `count` entries.
    unsafe {
        sys::cuGraphGetEdges_v2(
            g.cu_graph(),
            from.as_mut_ptr(),
            to.as_mut_ptr(),
            data.as_mut_ptr(),
            &mut count,
        )
    }
    .result()
    .unwrap();
    data.iter().map(|d| (d.from_port, d.type_)).collect()
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn edges_reach_the_driver_with_their_kind() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let kernel = kernels::PdlAddOne::load(&ctx).unwrap();
    let config = LaunchConfig::new(1, 32);
    let expected = [(0, 0), (1, 1), (2, 1)]; // ports: programmatic 1, launch order 2; type programmatic 1
    for (kind, want) in KINDS.iter().zip(expected) {
        let mut x = stream.alloc_zeros::<f32>(32).unwrap();
        let (g, _, _) = chain(&ctx, &kernel, config, &mut x, *kind, 4, |xb| (xb, 32));
        assert_eq!(driver_edge_data(&g), [want; 3], "{kind:?}");
    }
}

/// A kernel after a programmatic or launch-order edge completes after the
/// kernel before it only by waiting for it: disabling it is refused (what
/// follows it would no longer follow that kernel); the first kernel, and
/// kernels after full edges, may be disabled, and the chain then skips them.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_kernel_after_a_programmatic_edge_cannot_be_disabled() {
    use graph_runtime::error::NodeUpdateRefusal;
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let kernel = kernels::PdlAddOne::load(&ctx).unwrap();
    let n = 32u32;
    for kind in KINDS {
        let mut x = stream.alloc_zeros::<f32>(n as usize).unwrap();
        {
            let config = LaunchConfig::new(1, n);
            let (g, nodes, _) = chain(&ctx, &kernel, config, &mut x, kind, 3, |xb| (xb, n));
            let mut exec = g.instantiate().unwrap();
            let refused = exec.set_enabled(nodes[1].node(), false);
            if kind == EdgeKind::Full {
                refused.unwrap();
            } else {
                match refused {
                    Err(GraphError::NodeUpdateRefused {
                        label,
                        reason: NodeUpdateRefusal::FollowsProgrammaticEdge,
                    }) => assert_eq!(label, "step1"),
                    other => panic!("{kind:?}: {other:?}"),
                }
            }
            // The first node follows no edge; enabling is always allowed.
            exec.set_enabled(nodes[0].node(), false).unwrap();
            exec.set_enabled(nodes[1].node(), true).unwrap();
            exec.launch(&stream).unwrap();
            sync(&stream);
        }
        // Nodes 1 and 2 ran.
        let got = stream.clone_dtoh(&x).unwrap();
        assert!(got.iter().all(|v| *v == 2.0), "{kind:?}: {got:?}");
    }
}
