use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::cuda_graph;

// Labels and handles name generated items: a raw identifier is refused at
// its tokens (the DSL's keywords are plain labels already).
cuda_graph! {
    graph Raw(x: &mut CudaSlice<f32>, n: usize) {
        cond r#go;
        r#type: fill x = 0.0f32;
        alloc: empty;
        r#loop: for i in 0..n {
            step: empty;
        }
        r#type -> alloc -> r#loop;
    }
}

fn main() {}
