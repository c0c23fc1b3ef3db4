// Two nodes that access one buffer, one of them writing (a fill, a copy's
// destination), with no path between them: a data race, reported at the
// writer's operand with the other node named (once per pair).
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Racy(x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>, n: u32) {
        zero: fill x = 0.0f32;
        save: copy x => y;
        also: fill y = 1.0f32;
        both: fill x = 2.0f32;
        read: kernel kernels::Scale<<<1, 32>>>(y, 2.0f32, n);
        save -> read;
    }
}

fn main() {}
