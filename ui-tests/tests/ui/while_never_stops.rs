use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Forever(x: &mut CudaSlice<f32>) {
        cond again = 1;
        repeat: while again {
            step: kernel kernels::K<<<1, 32>>>(x);
        }
    }
}

fn main() {}
