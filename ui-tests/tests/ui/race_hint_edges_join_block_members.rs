// A race between a node outside a repeated block and one inside it is
// ordered by an edge to the block itself: the hint names the block, not
// the node inside it, which no edge outside the block may name.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Outside(x: &mut CudaSlice<f32>, n: usize) {
        #[disjoint(x)]
        lanes: for w in 0..n {
            chain: for i in 0..n {
                step: fill x = 0.0f32;
                step[i-1] -> step;
            }
        }
        unordered: fill x = 1.0f32;
    }
}

fn main() {}
