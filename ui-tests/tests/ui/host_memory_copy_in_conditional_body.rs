use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph HostCopy(x_h: &[f32], x: &mut CudaSlice<f32>) {
        cond go = 1;
        branch: if go {
            load: copy x_h => x;
        }
    }
}

fn main() {}
