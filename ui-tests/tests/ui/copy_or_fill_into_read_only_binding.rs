// A slice the graph binds read-only (`&CudaSlice`) as the destination of a
// copy or a fill: a compile error at the destination (it failed only when
// the graph was built).
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Clobber(x: &mut CudaSlice<f32>, b: &CudaSlice<f32>) {
        over:  copy x => b;
        zero:  fill b = 0.0f32;
        over -> zero;
    }
}

fn main() {}
