// A capture node that names a conditional handle in its closure sets it (its
// captured kernels call cudaGraphSetConditional with `handle.raw()`): a WHILE
// driven by it is accepted.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;

cuda_graph! {
    graph CapturedLoop(stream: &Arc<CudaStream>, counter: &mut CudaSlice<i32>) {
        cond again = 1;
        spin: while again {
            // SAFETY: the captured work touches only `counter`, bound to the graph.
            step: unsafe capture(stream) |_s| {
                let _ = (again.raw(), counter.device_ptr());
                Ok(())
            };
        }
    }
}

fn main() {}
