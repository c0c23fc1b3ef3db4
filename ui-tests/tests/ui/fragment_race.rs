// Each placement is checked where it is placed: two placements that write
// one buffer, unordered, race.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Twice(x: &mut CudaSlice<f32>) {
        fragment zero {
            z: fill x = 0.0f32;
        }
        one: use zero;
        two: use zero;
    }
}

fn main() {}
