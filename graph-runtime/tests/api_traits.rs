//! The public types' auto traits and Debug, pinned (a change here is an API
//! change): handles and errors move and share across threads; graphs,
//! execs and the types `cuda_graph!` generates move between threads.

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
