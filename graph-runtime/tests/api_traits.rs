//! The public types' auto traits and Debug, pinned (a change here is an API
//! change): handles and errors move and share across threads; graphs,
//! execs and the types `cuda_graph!` generates move between threads;
//! profiles are plain data; capture views are Debug.

use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::{Buf, Escaped, Exec, Graph, GraphError, KernelNode, Node};
use std::fmt::Debug;

cuda_graph! {
    /// A generated graph, for its types' traits.
    pub graph Pinned(x: &mut CudaSlice<f32>, n: u32) {
        bump: kernel kernels::AddOne<<<1, 32>>>(x, n);
    }
}

fn send<T: Send>() {}
fn send_sync<T: Send + Sync>() {}
fn debug<T: Debug>() {}

#[test]
fn handles_and_errors_are_send_sync_and_debug() {
    send_sync::<Node>();
    send_sync::<KernelNode<<kernels::AddOne as graph_runtime::kernel::KernelDef>::Args>>();
    send_sync::<Buf<'static, f32>>();
    send_sync::<GraphError>();
    send_sync::<Escaped<f32>>();
    debug::<Node>();
    debug::<Buf<'static, f32>>();
    debug::<GraphError>();
    debug::<Escaped<f32>>();
}

#[test]
fn graphs_execs_and_generated_types_move_between_threads() {
    send::<Graph<'static>>();
    send::<Exec<'static>>();
    send::<Pinned<'static>>();
    send::<PinnedExec<'static>>();
    debug::<Graph<'static>>();
    debug::<Exec<'static>>();
    debug::<Pinned<'static>>();
    debug::<PinnedExec<'static>>();
}

#[test]
fn capture_views_and_profiles_are_debug_and_profiles_share() {
    use graph_runtime::capture::{Capture, CaptureView, CaptureViewMut};
    use graph_runtime::{NodeTime, Profile};
    // A profile is plain data: it moves, shares, clones and compares.
    send_sync::<Profile>();
    send_sync::<NodeTime>();
    fn clone_eq<T: Clone + PartialEq>() {}
    clone_eq::<Profile>();
    debug::<Profile>();
    // A capture's views are addresses borrowed for the capture; the
    // capture itself records uses through a RefCell (one thread).
    send_sync::<CaptureView<'static, f32>>();
    send_sync::<CaptureViewMut<'static, f32>>();
    debug::<Capture<'static, 'static>>();
    debug::<CaptureView<'static, f32>>();
    debug::<CaptureViewMut<'static, f32>>();
}
