// The hints of an iteration race name what an edge between iterations
// may join: a nested block by its label, not a node inside it. A bare
// `#[disjoint]` claims nothing of host buffers, whose uses are always
// ordered: lanes that copy into one host buffer still race.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Hints(x: &mut CudaSlice<f32>, y: &CudaSlice<f32>, n: usize) {
        host seen: f32[32];
        lane: for w in 0..n {
            stage: for s in 0..n {
                step: fill x = 1.0f32;
                step[s-1] -> step;
            }
        }
        #[disjoint]
        shown: for w in 0..n {
            down: copy y => seen;
            show: host |seen: &[f32]| drop(seen);
            down -> show;
        }
        lane -> shown;
    }
}

fn main() {}
