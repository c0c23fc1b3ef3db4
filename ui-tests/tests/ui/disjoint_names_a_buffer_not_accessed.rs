// `#[disjoint(y)]` on a node that does not access `y`, and a malformed
// `#[disjoint]`.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Opt(x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>) {
        #[disjoint(y)]
        a: fill x = 0.0f32;
        #[disjoint = "x"]
        b: fill x = 1.0f32;
        a -> b;
    }
}

fn main() {}
