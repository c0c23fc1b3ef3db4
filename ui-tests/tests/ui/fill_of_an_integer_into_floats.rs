// `fill y = 0;` into an `f32` buffer: rustc's plain mismatch at the value,
// with its "use a float literal", and no note about the runtime.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Zero(y: &mut CudaSlice<f32>) {
        clear: fill y = 0;
    }
}

fn main() {}
