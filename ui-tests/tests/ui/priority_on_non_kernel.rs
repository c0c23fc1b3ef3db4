use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    #[use_node_priority]
    graph Priority(x: &mut CudaSlice<f32>) {
        #[priority(1)]
        zero: fill x = 0.0f32;
    }
}

fn main() {}
