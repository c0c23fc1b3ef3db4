// Two iterations that touch one buffer, one writing, race unless a path
// orders them (an edge between iterations), or the nodes are marked
// `#[disjoint]`; two edges back do not order neighbouring iterations.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Lanes(x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>, n: usize) {
        lanes: for w in 0..n {
            zero: fill x = 0.0f32;
        }
        twice: for i in 0..n {
            again: fill y = 1.0f32;
            again[i-2] -> again;
        }
        lanes -> twice;
    }
}

fn main() {}
