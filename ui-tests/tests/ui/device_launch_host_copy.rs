// A `#[device_launch]` graph copies device memory only: a host slice named
// in one of its copies is refused at the operand.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    #[device_launch]
    graph OnDevice(x_h: &[f32], x: &mut CudaSlice<f32>) {
        load: copy x_h => x;
    }
}

fn main() {}
