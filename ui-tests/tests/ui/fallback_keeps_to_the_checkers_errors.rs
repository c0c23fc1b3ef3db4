// The items a graph with errors still provides add no errors of their own:
// a loop variable named twice, an escaping allocation named like a
// parameter (or like another), each reported by the checker only.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Twice(x: &mut CudaSlice<f32>, n: u32) {
        outer: for i in 0..n {
            inner: for i in 0..n {
                #[disjoint(x)]
                step: fill x = 0.0f32;
            }
        }
        #[escape]
        x: alloc f32[n];
        #[escape]
        kept: alloc f32[n];
        #[escape]
        kept: alloc f32[n];
        outer -> x -> kept;
    }
}

fn main() {}
