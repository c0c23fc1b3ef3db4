use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph External(x: &mut CudaSlice<f32>) {
        k: kernel kernels::K<<<1, 32>>>(x);
        done: free x;
        k -> done;
    }
}

fn main() {}
