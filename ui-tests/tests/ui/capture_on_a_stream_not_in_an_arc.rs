// A capture node given a `&CudaStream` (cudarc's streams are shared as
// `Arc`s): rustc's mismatch at the stream, not over the whole invocation.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaStream;

cuda_graph! {
    graph Captured(stream: &CudaStream) {
        // SAFETY: the work touches nothing.
        c: unsafe capture(stream) |s| { let _ = s; Ok(()) };
    }
}

fn main() {}
