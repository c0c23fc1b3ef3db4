// `r#x` is `x`, as in Rust: the checks see one buffer however it is
// written (a race, a use after free, a write to a read-only slice).
use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Race(x: &mut CudaSlice<f32>) {
        a: fill x = 0.0f32;
        b: fill r#x = 1.0f32;
    }

    graph Freed() {
        t: alloc f32[32];
        done: free t;
        u: fill r#t = 0.0f32;
        t -> done -> u;
    }

    graph ReadOnly(y: &CudaSlice<f32>) {
        a: fill r#y = 0.0f32;
    }
}

fn main() {}
