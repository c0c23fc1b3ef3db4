// A body's nodes race with the nodes outside its conditional node that are
// not ordered with it; two branches of one `if` never run together.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Racy(x: &mut CudaSlice<f32>, n: u32) {
        cond go;
        set: kernel kernels::SetCondition<<<1, 1>>>(go, n);
        branch: if go {
            then_fill: fill x = 1.0f32;
        } else {
            else_fill: fill x = 2.0f32;
        }
        outside: fill x = 3.0f32;
        set -> branch;
    }
}

fn main() {}
