// A buffer handle is `Copy`: an operand can stash it in a cell, or a
// caller's variable, that another node's operand reads back. A name an
// operand cannot be read through counts as a buffer of its own there, so
// the two nodes' accesses to it race.
use graph_runtime::cudarc::driver::{CudaContext, CudaSlice};
use graph_runtime::{cuda_graph, Buf};
use std::cell::Cell;
use std::sync::Arc;

pub struct Stash<'a>(pub Cell<Option<Buf<'a, f32>>>);

cuda_graph! {
    graph Smuggle(x: &mut CudaSlice<f32>, stash: &Stash<'a>, n: u32) {
        a: kernel kernels::AddOne<<<1, 32>>>({ stash.0.set(Some(x)); x }, n);
        b: kernel kernels::AddOne<<<1, 32>>>(stash.0.get().unwrap(), n);
    }
}

fn build(ctx: &Arc<CudaContext>, n: u32) {
    let mut stash = None;
    let _ = cuda_graph!(graph(ctx) {
        t: alloc f32[32];
        a: kernel kernels::AddOne<<<1, 32>>>({ stash = Some(t); t }, n);
        b: kernel kernels::AddOne<<<1, 32>>>(stash.unwrap(), n);
        done: free t;
        t -> [a, b] -> done;
    });
}

fn main() {}
