//! Class 2: allocation identity across graphs.
//!
//! Graphs made with `new_sharing` or `child_graph` share their bound buffers
//! (one resource identity), and each numbers its allocations from 0. A `Buf`
//! of graph A's allocation must still be refused by every other graph: in B
//! it would be used outside any lifetime B knows (A's alloc and free nodes
//! are not in B), and B's allocation of the same index is another address.
//! Whole-graph updates across graphs with memory nodes are refused for the
//! same reason: each graph's allocations live at its own addresses.

use crate::common::{gpu, graph_memory_lock, sync};
use crate::{expect_foreign, expect_refused, iota_times};
use cudarc::driver::sys::CUgraphExecUpdateResult;
use graph_runtime::error::OrderRule;
use graph_runtime::kernel::KernelDef;
use graph_runtime::{
    cudarc, Buf, Graph, GraphError, InstantiateOptions, Kernel, LaunchConfig, UpdateOutcome,
};

const N: u32 = 4096;

fn cfg() -> LaunchConfig {
    LaunchConfig::for_elements(N, 256)
}

/// `alloc -> iota -> scale(factor) -> copy into out -> free`, labels prefixed
/// with `prefix`.
fn scaled_through_graph_memory<'a>(
    g: &mut Graph<'a>,
    prefix: &str,
    iota: &Kernel<<kernels::Iota as KernelDef>::Args>,
    scale: &Kernel<<kernels::Scale as KernelDef>::Args>,
    out: Buf<'a, f32>,
    factor: f32,
) {
    let (alloc, tmp) = g
        .add_alloc::<f32>(&format!("{prefix}_tmp"), N as usize, &[])
        .unwrap();
    let fill = g
        .add_kernel(&format!("{prefix}_fill"), iota, cfg(), (tmp, N), &[alloc])
        .unwrap();
    let scaled = g
        .add_kernel(
            &format!("{prefix}_scale"),
            scale,
            cfg(),
            (tmp, factor, N),
            &[fill.node()],
        )
        .unwrap();
    let copy = g
        .add_copy(&format!("{prefix}_copy"), tmp, out, &[scaled.node()])
        .unwrap();
    g.add_free(&format!("{prefix}_free"), tmp, &[copy]).unwrap();
}

/// Attack: graph B (`a.new_sharing()`) and a child graph of A
/// (`a.child_graph()`) are given a `Buf` of A's allocation, in every node
/// kind that takes a buffer: kernel (whole and sub-slice), copy source, copy
/// destination, fill, free; once while B has no allocation of its own and
/// once while it has one with the same index (0). And A is given B's and
/// the child's allocations.
///
/// Must happen: every such node is refused with `ForeignHandle` naming the
/// node, and nothing is added (node counts unchanged); each graph's own
/// allocation still works: A writes `i`, B writes `3 * i`.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn sharing_and_child_graphs_refuse_another_graphs_allocation() {
    let ctx = gpu();
    let _lock = graph_memory_lock();
    let stream = ctx.new_stream().unwrap();
    let (iota, scale) = (
        kernels::Iota::load(&ctx).unwrap(),
        kernels::Scale::load(&ctx).unwrap(),
    );
    let mut out_a = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut out_b = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut a = Graph::new(&ctx).unwrap();
        let (oa, ob) = (a.bind_mut(&mut out_a), a.bind_mut(&mut out_b));
        let (alloc_a, tmp_a) = a.add_alloc::<f32>("a_tmp", N as usize, &[]).unwrap();
        let fill_a = a
            .add_kernel("a_fill", &iota, cfg(), (tmp_a, N), &[alloc_a])
            .unwrap();
        let copy_a = a.add_copy("a_copy", tmp_a, oa, &[fill_a.node()]).unwrap();
        a.add_free("a_free", tmp_a, &[copy_a]).unwrap();

        // B shares A's bound buffers and has no allocation yet.
        let mut b = a.new_sharing().unwrap();
        let err = b
            .add_kernel("b_kernel", &iota, cfg(), (tmp_a, N), &[])
            .unwrap_err();
        expect_foreign(&err, Some("b_kernel"));
        let err = b.add_copy("b_copy", tmp_a, ob, &[]).unwrap_err();
        expect_foreign(&err, Some("b_copy"));

        // B with an allocation of its own, of the same index as A's.
        let (alloc_b, tmp_b) = b.add_alloc::<f32>("b_tmp", N as usize, &[]).unwrap();
        let count = b.node_count();
        let err = b
            .add_kernel("b_kernel", &iota, cfg(), (tmp_a, N), &[alloc_b])
            .unwrap_err();
        expect_foreign(&err, Some("b_kernel"));
        let part = tmp_a.slice(0..16);
        let err = b
            .add_kernel("b_part", &iota, cfg(), (part, 16), &[alloc_b])
            .unwrap_err();
        expect_foreign(&err, Some("b_part"));
        let err = b
            .add_copy("b_copy_from", tmp_a, ob, &[alloc_b])
            .unwrap_err();
        expect_foreign(&err, Some("b_copy_from"));
        let err = b
            .add_copy("b_copy_into", tmp_b, tmp_a, &[alloc_b])
            .unwrap_err();
        expect_foreign(&err, Some("b_copy_into"));
        let err = b.add_fill("b_fill", tmp_a, 0.0f32, &[alloc_b]).unwrap_err();
        expect_foreign(&err, Some("b_fill"));
        let err = b.add_free("b_free", tmp_a, &[alloc_b]).unwrap_err();
        expect_foreign(&err, Some("b_free"));
        assert_eq!(b.node_count(), count, "a refused node was added");

        // B's own allocation works.
        scaled_through_graph_memory(&mut b, "b_own", &iota, &scale, ob, 3.0);

        // A refuses B's allocations.
        let count = a.node_count();
        let err = a
            .add_kernel("a_uses_b", &iota, cfg(), (tmp_b, N), &[alloc_a])
            .unwrap_err();
        expect_foreign(&err, Some("a_uses_b"));

        // A child graph refuses its parent's allocation, and the parent the child's.
        let mut child = a.child_graph().unwrap();
        let err = child
            .add_kernel("child_uses_parent", &iota, cfg(), (tmp_a, N), &[])
            .unwrap_err();
        expect_foreign(&err, Some("child_uses_parent"));
        let (_, tmp_c) = child.add_alloc::<f32>("c_tmp", N as usize, &[]).unwrap();
        let err = a
            .add_kernel("a_uses_child", &iota, cfg(), (tmp_c, N), &[alloc_a])
            .unwrap_err();
        expect_foreign(&err, Some("a_uses_child"));
        let err = a.add_free("a_frees_child", tmp_c, &[alloc_a]).unwrap_err();
        expect_foreign(&err, Some("a_frees_child"));
        drop(child);
        assert_eq!(a.node_count(), count, "a refused node was added");

        let (mut exec_a, mut exec_b) = (a.instantiate().unwrap(), b.instantiate().unwrap());
        exec_a.launch(&stream).unwrap();
        exec_b.launch(&stream).unwrap();
        sync(&stream);
    }
    assert_eq!(stream.clone_dtoh(&out_a).unwrap(), iota_times(N, 1.0));
    assert_eq!(stream.clone_dtoh(&out_b).unwrap(), iota_times(N, 3.0));
}

/// Attack: the exec of graph B (which shares A's bound buffers and has its
/// own allocation of index 0) is given A's allocation through
/// `set_kernel_args`: on a node unordered with everything (`b_side`) and on
/// B's own in-lifetime user of its allocation (`b_scale`). Also A's node
/// handle passed to B's exec, and B's allocation to A's exec.
///
/// Must happen: each is refused with `ForeignHandle` (naming the node where
/// the node is the exec's); the legal update of `b_scale` (factor 4) is
/// accepted; A writes `i`, B writes `4 * i`, and the side node `i`.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn execs_refuse_another_graphs_allocation_and_nodes() {
    let ctx = gpu();
    let _lock = graph_memory_lock();
    let stream = ctx.new_stream().unwrap();
    let (iota, scale) = (
        kernels::Iota::load(&ctx).unwrap(),
        kernels::Scale::load(&ctx).unwrap(),
    );
    let mut out_a = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut out_b = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut side = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut a = Graph::new(&ctx).unwrap();
        let (oa, ob, sb) = (
            a.bind_mut(&mut out_a),
            a.bind_mut(&mut out_b),
            a.bind_mut(&mut side),
        );
        let (alloc_a, tmp_a) = a.add_alloc::<f32>("a_tmp", N as usize, &[]).unwrap();
        let fill_a = a
            .add_kernel("a_fill", &iota, cfg(), (tmp_a, N), &[alloc_a])
            .unwrap();
        let copy_a = a.add_copy("a_copy", tmp_a, oa, &[fill_a.node()]).unwrap();
        a.add_free("a_free", tmp_a, &[copy_a]).unwrap();

        let mut b = a.new_sharing().unwrap();
        let b_side = b.add_kernel("b_side", &iota, cfg(), (sb, N), &[]).unwrap();
        let (alloc_b, tmp_b) = b.add_alloc::<f32>("b_tmp", N as usize, &[]).unwrap();
        let fill_b = b
            .add_kernel("b_fill", &iota, cfg(), (tmp_b, N), &[alloc_b])
            .unwrap();
        let scale_b = b
            .add_kernel("b_scale", &scale, cfg(), (tmp_b, 2.0, N), &[fill_b.node()])
            .unwrap();
        let copy_b = b.add_copy("b_copy", tmp_b, ob, &[scale_b.node()]).unwrap();
        b.add_free("b_free", tmp_b, &[copy_b]).unwrap();

        let mut exec_a = a.instantiate().unwrap();
        let mut exec_b = b.instantiate().unwrap();
        let err = exec_b.set_kernel_args(&b_side, (tmp_a, N)).unwrap_err();
        expect_foreign(&err, Some("b_side"));
        let err = exec_b
            .set_kernel_args(&scale_b, (tmp_a, 2.0, N))
            .unwrap_err();
        expect_foreign(&err, Some("b_scale"));
        let err = exec_b.set_kernel_args(&fill_a, (tmp_b, N)).unwrap_err();
        expect_foreign(&err, None);
        let err = exec_a.set_kernel_args(&fill_a, (tmp_b, N)).unwrap_err();
        expect_foreign(&err, Some("a_fill"));
        // Ordering is checked too, for the exec's own allocation.
        let err = exec_b.set_kernel_args(&b_side, (tmp_b, N)).unwrap_err();
        expect_refused!(
            &err,
            GraphError::Unordered {
                rule: OrderRule::UseBeforeAlloc { .. },
                ..
            },
            "b_side"
        );

        exec_b.set_kernel_args(&scale_b, (tmp_b, 4.0, N)).unwrap();
        exec_a.launch(&stream).unwrap();
        exec_b.launch(&stream).unwrap();
        sync(&stream);
    }
    assert_eq!(stream.clone_dtoh(&out_a).unwrap(), iota_times(N, 1.0));
    assert_eq!(stream.clone_dtoh(&out_b).unwrap(), iota_times(N, 4.0));
    assert_eq!(stream.clone_dtoh(&side).unwrap(), iota_times(N, 1.0));
}

/// Attack: `Exec::update` of A's exec from A2 (`a.new_sharing()`, the same
/// topology, memory nodes, another scale factor and output), and of a graph
/// without memory nodes from a graph with them.
///
/// Must happen: both updates fail with `GraphError::Update`
/// (`NOT_SUPPORTED`); `update_or_reinstantiate` falls back to
/// `UpdateOutcome::Reinstantiated` (with the update error as its reason),
/// the exec is then A2's only exec (`SecondExec` for another) while A may
/// have a new one, and updating back from A is refused too. Launched before
/// and after, A's exec writes `2 * i`, the re-instantiated one `5 * i`.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn whole_graph_updates_across_graphs_with_memory_nodes_reinstantiate() {
    let ctx = gpu();
    let _lock = graph_memory_lock();
    let stream = ctx.new_stream().unwrap();
    let (iota, scale) = (
        kernels::Iota::load(&ctx).unwrap(),
        kernels::Scale::load(&ctx).unwrap(),
    );
    let mut first = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut second = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut plain = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let outcome;
    {
        let mut a = Graph::new(&ctx).unwrap();
        let (o1, o2, o3) = (
            a.bind_mut(&mut first),
            a.bind_mut(&mut second),
            a.bind_mut(&mut plain),
        );
        scaled_through_graph_memory(&mut a, "a", &iota, &scale, o1, 2.0);
        let mut a2 = a.new_sharing().unwrap();
        scaled_through_graph_memory(&mut a2, "a", &iota, &scale, o2, 5.0);

        let mut exec = a.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        let err = exec.update(&a2).unwrap_err();
        assert!(
            matches!(
                err,
                GraphError::Update {
                    result: CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED,
                    ..
                }
            ),
            "{err:?}"
        );
        // Refused without a change: the exec still runs A.
        exec.launch(&stream).unwrap();

        outcome = exec
            .update_or_reinstantiate(&a2, &InstantiateOptions::default())
            .unwrap();
        assert!(
            matches!(a2.instantiate(), Err(GraphError::SecondExec)),
            "the re-instantiated exec is A2's one exec"
        );
        drop(
            a.instantiate()
                .expect("A's exec is gone: A may have a new one"),
        );
        exec.launch(&stream).unwrap();
        let err = exec.update(&a).unwrap_err();
        assert!(matches!(err, GraphError::Update { .. }), "{err:?}");

        // An exec without memory nodes is not updated from a graph with them.
        let mut p = a.new_sharing().unwrap();
        p.add_kernel("p_iota", &iota, cfg(), (o3, N), &[]).unwrap();
        let mut exec_p = p.instantiate().unwrap();
        let err = exec_p.update(&a).unwrap_err();
        assert!(matches!(err, GraphError::Update { .. }), "{err:?}");
        exec_p.launch(&stream).unwrap();
        sync(&stream);
    }
    assert!(
        matches!(
            &outcome,
            UpdateOutcome::Reinstantiated {
                reason: GraphError::Update { .. }
            }
        ),
        "{outcome:?}"
    );
    assert_eq!(stream.clone_dtoh(&first).unwrap(), iota_times(N, 2.0));
    assert_eq!(stream.clone_dtoh(&second).unwrap(), iota_times(N, 5.0));
    assert_eq!(stream.clone_dtoh(&plain).unwrap(), iota_times(N, 1.0));
}

/// Attack: `update_or_reinstantiate` whose re-instantiation fails (B already
/// has its one exec, so `SecondExec`), then a second exec of A while A's
/// first one is still alive and launching (CUDA allows one live exec of a
/// graph with memory nodes).
///
/// Must happen: the fallback returns `SecondExec`; the old exec is still A's
/// and still works (writes `2 * i`); a second exec of A is refused (by the
/// runtime with `SecondExec`, or at the least by the driver at
/// instantiation).
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_failed_reinstantiation_keeps_one_live_exec_per_graph() {
    let ctx = gpu();
    let _lock = graph_memory_lock();
    let stream = ctx.new_stream().unwrap();
    let (iota, scale) = (
        kernels::Iota::load(&ctx).unwrap(),
        kernels::Scale::load(&ctx).unwrap(),
    );
    let mut first = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut second = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut a = Graph::new(&ctx).unwrap();
        let (o1, o2) = (a.bind_mut(&mut first), a.bind_mut(&mut second));
        scaled_through_graph_memory(&mut a, "a", &iota, &scale, o1, 2.0);
        let mut b = a.new_sharing().unwrap();
        scaled_through_graph_memory(&mut b, "a", &iota, &scale, o2, 7.0);
        let _b_exec = b.instantiate().unwrap();
        let mut exec = a.instantiate().unwrap();

        let err = exec
            .update_or_reinstantiate(&b, &InstantiateOptions::default())
            .unwrap_err();
        assert!(matches!(err, GraphError::SecondExec), "{err:?}");
        let again = a.instantiate();
        eprintln!(
            "second exec of a graph with memory nodes while the first lives: {:?}",
            again.as_ref().err()
        );
        assert!(
            matches!(
                again,
                Err(GraphError::SecondExec | GraphError::Instantiate { .. })
            ),
            "a second live exec of a graph with memory nodes: {again:?}"
        );
        exec.launch(&stream).unwrap();
        sync(&stream);
    }
    assert_eq!(stream.clone_dtoh(&first).unwrap(), iota_times(N, 2.0));
    assert!(stream
        .clone_dtoh(&second)
        .unwrap()
        .iter()
        .all(|v| *v == 0.0));
}

/// Attack: an exec update hands a setter kernel a conditional handle of
/// another graph (the builder refuses it; so does the exec, by the graph
/// the handle was made for, whatever its value).
///
/// Must happen: refused with `ForeignHandle` naming the setter, and the
/// graph runs as built: its IF body runs once.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn exec_updates_refuse_another_graphs_conditional_handle() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let (set, mark) = (
        kernels::SetCondition::load(&ctx).unwrap(),
        kernels::Mark::load(&ctx).unwrap(),
    );
    let one = LaunchConfig::new(1, 1);
    let mut visits = stream.alloc_zeros::<i32>(2).unwrap();
    {
        let mut x = Graph::new(&ctx).unwrap();
        let v = x.bind_mut(&mut visits);
        // Two handles on X, so that Y's first handle is unlikely to have the
        // value of X's second (the one X's setter sets).
        let spare = x.cond_handle(Some(0)).unwrap();
        let hx = x.cond_handle(None).unwrap();
        let set_x = x.add_kernel("set_x", &set, one, (hx, 1), &[]).unwrap();
        x.add_if("if_x", hx, &[set_x.node()], |body| {
            body.add_kernel("mark_x", &mark, one, (v, 0), &[]).map(drop)
        })
        .unwrap();
        x.add_if("if_spare", spare, &[], |body| {
            body.add_kernel("mark_spare", &mark, one, (v, 1), &[])
                .map(drop)
        })
        .unwrap();
        let mut y = Graph::new(&ctx).unwrap();
        let hy = y.cond_handle(None).unwrap();
        let mut exec = x.instantiate().unwrap();
        // Refused as another graph's whatever its value (two graphs'
        // handles may share one).
        let err = exec.set_kernel_args(&set_x, (hy, 1)).unwrap_err();
        expect_foreign(&err, Some("set_x"));
        assert!(
            matches!(
                err,
                GraphError::ForeignHandle {
                    what: graph_runtime::error::Foreign::ConditionalHandle,
                    ..
                }
            ),
            "{err:?}"
        );
        exec.launch(&stream).unwrap();
        sync(&stream);
    }
    assert_eq!(stream.clone_dtoh(&visits).unwrap(), [1, 0]);
}
