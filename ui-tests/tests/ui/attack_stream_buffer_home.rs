// The stream an `Escaped` reports to a stream launch (`home`) may be an
// exec's own (`Exec::launch_on_own_stream`), which no caller may hold:
// another thread could begin a capture on it under a loan's copy. The
// sealed trait's methods are callable through a generic bound, so each
// takes a token only the runtime can make.
use graph_runtime::cudarc::driver::CudaStream;
use graph_runtime::kernel::StreamBuffer;
use std::sync::Arc;

fn stream_of<S: StreamBuffer<f32>>(buffer: &S) -> Arc<CudaStream> {
    buffer.home().clone()
}

fn main() {
    let _ = stream_of::<graph_runtime::Escaped<f32>>;
}
