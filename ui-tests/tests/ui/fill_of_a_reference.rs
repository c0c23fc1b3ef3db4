// A fill destination written as a reference in a named graph (`&mut u`,
// `&mut *v`: the expression form's spellings): one error at the `&` each,
// naming the buffer itself, not a type mismatch with a suggestion of
// `&mut &mut u`.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph FillRef(u: &mut graph_runtime::cudarc::driver::CudaSlice<f32>,
                  v: &mut graph_runtime::cudarc::driver::CudaSlice<f32>) {
        z: fill &mut u = 0.0f32;
        w: fill &mut *v = 0.0f32;
    }
}

fn main() {}
