//! Attacks on whole-graph updates (`Exec::update`) that would make the
//! driver pair the exec's nodes with the other graph's otherwise than the
//! exec's node handles assume. `cuGraphExecUpdate` pairs nodes by the
//! driver's order of them (sinks in the order they were added, then each
//! node's dependencies in the order given); the exec's typed handles name
//! nodes by the index they were added at. Paired otherwise, a per-node
//! update meant for `x` reaches the node that now runs `y`'s work, and two
//! kernels write one buffer unordered. (A profile, which adds and removes
//! nodes, is the third way: `gpu_runtime::profile`.) An update may not
//! change an edge's kind either: the exec keeps its own edges.

use crate::common::gpu;
use graph_runtime::cudarc::driver::sys::CUgraphExecUpdateResult;
use graph_runtime::cudarc::driver::{CudaSlice, CudaStream};
use graph_runtime::kernel::{KernelDef, Len, Out};
use graph_runtime::{
    Buf, EdgeKind, Graph, GraphError, InstantiateOptions, Kernel, KernelNode, LaunchConfig, Node,
    UpdateOutcome,
};
use std::sync::Arc;

const N: u32 = 1024;

/// `kernels::Scale`'s parameters.
type ScaleArgs = (Out<f32>, f32, Len);

/// Two kernels scaling `a` by 2 and `b` by 3, then an empty node after
/// both, its dependencies in `order` (0: x, y; 1: y, x); the kernels are
/// added in `added` order (0: x first; 1: y first). Returns x's node.
fn build<'a>(
    g: &mut Graph<'a>,
    scale: &Kernel<ScaleArgs>,
    (a, b): (Buf<'a, f32>, Buf<'a, f32>),
    added: usize,
    order: usize,
) -> KernelNode<ScaleArgs> {
    let cfg = LaunchConfig::for_elements(N, 256);
    let (x, y) = if added == 0 {
        let x = g.add_kernel("x", scale, cfg, (a, 2.0f32, N), &[]).unwrap();
        (
            x,
            g.add_kernel("y", scale, cfg, (b, 3.0f32, N), &[]).unwrap(),
        )
    } else {
        let y = g.add_kernel("y", scale, cfg, (b, 3.0f32, N), &[]).unwrap();
        (
            g.add_kernel("x", scale, cfg, (a, 2.0f32, N), &[]).unwrap(),
            y,
        )
    };
    let deps: [Node; 2] = match order {
        0 => [x.node(), y.node()],
        _ => [y.node(), x.node()],
    };
    g.add_empty("z", &deps).unwrap();
    x
}

fn values(stream: &Arc<CudaStream>, bufs: [&CudaSlice<f32>; 2]) -> [f32; 2] {
    bufs.map(|b| stream.clone_dtoh(b).unwrap()[(N - 1) as usize])
}

/// Attack: rebuild the graph (`new_sharing`, the documented way) with
/// the empty node's dependencies given in the other order, or the two
/// kernels added in the other order; update the exec from it, then set
/// x's arguments through the rebuilt graph's handle. Must happen: the
/// update is refused (`Update`, topology changed), and
/// `update_or_reinstantiate` makes a new exec whose x is the rebuilt x:
/// `a` is scaled by 7, `b` by 3.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn an_update_from_a_graph_built_in_another_order_is_refused() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let scale = kernels::Scale::load(&ctx).unwrap();
    for (added, order) in [(0, 1), (1, 0)] {
        let mut a = stream.clone_htod(&vec![1.0f32; N as usize]).unwrap();
        let mut b = stream.clone_htod(&vec![1.0f32; N as usize]).unwrap();
        {
            let mut g = Graph::new(&ctx).unwrap();
            let bufs = (g.bind_mut(&mut a), g.bind_mut(&mut b));
            build(&mut g, &scale, bufs, 0, 0);
            let mut exec = g.instantiate().unwrap();
            let mut rebuilt = g.new_sharing().unwrap();
            let x = build(&mut rebuilt, &scale, bufs, added, order);
            let refused = exec.update(&rebuilt).unwrap_err();
            assert!(
                matches!(
                    refused,
                    GraphError::Update {
                        result:
                            CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED,
                        label: None,
                        ..
                    }
                ),
                "added {added}, order {order}: {refused:?}"
            );
            let outcome = exec
                .update_or_reinstantiate(&rebuilt, &InstantiateOptions::default())
                .unwrap();
            assert!(
                matches!(outcome, UpdateOutcome::Reinstantiated { .. }),
                "{outcome:?}"
            );
            exec.set_kernel_args(&x, (bufs.0, 7.0f32, N)).unwrap();
            exec.launch(&stream).unwrap();
            exec.synchronize().unwrap();
        }
        assert_eq!(
            values(&stream, [&a, &b]),
            [7.0, 3.0],
            "added {added}, order {order}"
        );
    }
}

/// The same rebuild in the same order is updated in place, and the
/// per-node update through the rebuilt graph's handle reaches x.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn an_update_from_a_graph_built_in_the_same_order_pairs_node_with_node() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let scale = kernels::Scale::load(&ctx).unwrap();
    let mut a = stream.clone_htod(&vec![1.0f32; N as usize]).unwrap();
    let mut b = stream.clone_htod(&vec![1.0f32; N as usize]).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let bufs = (g.bind_mut(&mut a), g.bind_mut(&mut b));
        build(&mut g, &scale, bufs, 1, 1);
        let mut exec = g.instantiate().unwrap();
        let mut rebuilt = g.new_sharing().unwrap();
        let x = build(&mut rebuilt, &scale, bufs, 1, 1);
        exec.update(&rebuilt).unwrap();
        exec.set_kernel_args(&x, (bufs.0, 7.0f32, N)).unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
    }
    assert_eq!(values(&stream, [&a, &b]), [7.0, 3.0]);
}

/// Attack: an exec whose second kernel follows the first through a
/// launch-order edge (PDL: it may start once the first has begun),
/// updated from a rebuild where a plain kernel follows through a full
/// edge. The driver keeps the exec's edges in an update, so the plain
/// kernel, which does not wait for its predecessor, would start early
/// and race it. Must happen: the update is refused (`Update`, topology
/// changed); re-instantiated, the rebuilt graph runs with its own edges.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn an_update_that_changes_an_edge_kind_is_refused() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let pdl = kernels::PdlAddOne::load(&ctx).unwrap();
    let plain = kernels::AddOne::load(&ctx).unwrap();
    let cfg = LaunchConfig::new(1, 256);
    let mut x = stream.alloc_zeros::<f32>(256).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        let a = g.add_kernel("a", &pdl, cfg, (xb, 256), &[]).unwrap();
        g.add_kernel_with_edges(
            "b",
            &pdl,
            cfg,
            (xb, 256),
            &[a.node()],
            Some(&[EdgeKind::LaunchOrder]),
        )
        .unwrap();
        let mut exec = g.instantiate().unwrap();
        let mut rebuilt = g.new_sharing().unwrap();
        let a = rebuilt.add_kernel("a", &pdl, cfg, (xb, 256), &[]).unwrap();
        rebuilt
            .add_kernel("b", &plain, cfg, (xb, 256), &[a.node()])
            .unwrap();
        let refused = exec.update(&rebuilt).unwrap_err();
        assert!(
            matches!(
                refused,
                GraphError::Update {
                    result: CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED,
                    ..
                }
            ),
            "{refused:?}"
        );
        exec.update_or_reinstantiate(&rebuilt, &InstantiateOptions::default())
            .unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
    }
    assert!(stream.clone_dtoh(&x).unwrap().iter().all(|v| *v == 2.0));
}
