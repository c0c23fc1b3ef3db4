// An argument that races across the iterations of two nested blocks is
// two mistakes, each with its own fix: both are reported in one run.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Nested(x: &mut CudaSlice<f32>, layers: usize, lanes: usize) {
        layer: for l in 0..layers {
            lane: for w in 0..lanes {
                act: kernel kernels::AddOne<<<1, 32>>>(x.slice(w * 32..(w + 1) * 32), 32u32);
            }
        }
    }
}

fn main() {}
