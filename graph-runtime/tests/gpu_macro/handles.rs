//! Conditional handles in `bound()`: per-node updates of the kernels that
//! set them, and a top-level handle driving a node in a body.

use crate::common::{assert_foreign, gpu};
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;

cuda_graph! {
    /// A top-level handle that drives an IF inside another IF's body, set
    /// by a top-level kernel (updated through `bound()`).
    graph EnclosingHandle(visits: &mut CudaSlice<i32>, pick: u32) {
        cond outer = 1;
        cond inner;
        decide: kernel kernels::SetCondition<<<1, 1>>>(inner, pick);
        wrap: if outer {
            choose: if inner {
                hit: kernel kernels::Mark<<<1, 1>>>(visits, 0u32);
            }
        }
        decide -> wrap;
    }

    /// A WHILE whose test kernel takes a limit, updated per node through
    /// the top-level handle in `bound()`.
    graph Converge(residual: &CudaSlice<f64>, iterations: &mut CudaSlice<u32>, limit: u32) {
        cond again = 1;
        solve: while again {
            test: kernel kernels::JacobiContinue<<<1, 1>>>(again, residual, iterations, 0.0f64, limit);
        }
    }
}

/// A kernel that sets a top-level handle takes per-node updates: the
/// handle is in `bound()`. The WHILE runs to the limit it is given (3, then
/// 7 after the update: 4 iterations more, then 9 through a rebuilt graph's
/// handle after a whole-graph update); another build's handle is refused
/// as another graph's.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_kernel_setting_a_handle_takes_per_node_updates() {
    let ctx = gpu();
    let stream: Arc<CudaStream> = ctx.new_stream().unwrap();
    let residual = stream.clone_htod(&[1.0f64]).unwrap();
    let mut iterations = stream.alloc_zeros::<u32>(1).unwrap();
    let mut elsewhere = stream.alloc_zeros::<u32>(1).unwrap();
    {
        let g = Converge::build(&ctx, &residual, &mut iterations, 3).unwrap();
        let other = Converge::build(&ctx, &residual, &mut elsewhere, 3).unwrap();
        let (bound, foreign) = (g.bound(), other.bound());
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
        let args = |again| (again, bound.residual, bound.iterations, 0.0, 7);
        let err = exec.test().set_args(args(foreign.again)).unwrap_err();
        assert_foreign(
            &err,
            graph_runtime::error::Foreign::ConditionalHandle,
            "test",
        );
        exec.test().set_args(args(bound.again)).unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
        let seen = exec.bound_mut(bound.iterations).unwrap();
        assert_eq!(stream.clone_dtoh(&seen.view()).unwrap(), [7]);
        drop(seen);
        // After a whole-graph update, the rebuilt graph's handle: to 9.
        let rebuilt = g.rebuild(bound.residual, bound.iterations, 3).unwrap();
        let outcome = exec.update(&rebuilt).unwrap();
        assert!(
            matches!(outcome, graph_runtime::UpdateOutcome::Updated),
            "{outcome:?}"
        );
        let again = rebuilt.bound().again;
        exec.test()
            .set_args((again, bound.residual, bound.iterations, 0.0, 9))
            .unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
    }
    assert_eq!(stream.clone_dtoh(&iterations).unwrap(), [9]);
    assert_eq!(stream.clone_dtoh(&elsewhere).unwrap(), [0]);
}

/// A handle made on the top graph drives an IF inside another IF's body
/// (CUDA allows a child graph's node): `pick` 0 skips the mark; after a
/// per-node update of the top-level setter to 1, the next launch marks.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_top_level_handle_drives_a_node_in_a_body() {
    let ctx = gpu();
    let stream: Arc<CudaStream> = ctx.new_stream().unwrap();
    let mut visits = stream.alloc_zeros::<i32>(1).unwrap();
    {
        let g = EnclosingHandle::build(&ctx, &mut visits, 0).unwrap();
        let bound = g.bound();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
        exec.decide().set_args((bound.inner, 1)).unwrap();
        exec.launch(&stream).unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
    }
    assert_eq!(stream.clone_dtoh(&visits).unwrap(), [2]);
}
