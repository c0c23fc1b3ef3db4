// Two capture nodes that name one handle both set it, so they must be
// ordered, as two kernels taking it must.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaStream;
use std::sync::Arc;

cuda_graph! {
    graph Racing(stream: &Arc<CudaStream>) {
        cond go;
        // SAFETY: the captured work touches no memory.
        first: unsafe capture(stream) |_s| { let _ = go.raw(); Ok(()) };
        // SAFETY: as above.
        second: unsafe capture(stream) |_s| { let _ = go.raw(); Ok(()) };
        branch: if go { work: empty; }
        [first, second] -> branch;
    }
}

fn main() {}
