use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    #[device_launch]
    graph OnDevice(x: &mut CudaSlice<f32>) {
        k: kernel kernels::K<<<1, 32>>>(x);
        report: host || println!("done");
        k -> report;
    }
}

fn main() {}
