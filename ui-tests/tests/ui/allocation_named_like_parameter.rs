use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Shadow(x: &mut CudaSlice<f32>, n: u32) {
        x: alloc f32[n];
        done: free x;
        x -> done;
    }
}

fn main() {}
