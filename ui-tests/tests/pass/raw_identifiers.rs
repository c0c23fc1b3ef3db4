// Raw identifiers: a name written raw is the plain name (labels, buffers,
// handles, parameters, edges), and a parameter named by a Rust keyword is
// written raw throughout.
use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Raw(r#type: &mut CudaSlice<f32>, r#x: &mut CudaSlice<f32>) {
        cond r#go = 1;
        r#a: fill r#type = 0.0f32;
        b: fill x = 1.0f32;
        r#t: alloc f32[32];
        c: fill r#t = 2.0f32;
        done: free r#t;
        i: if go { d: fill r#x = 3.0f32; }
        a -> r#b -> t -> r#c -> done -> r#i;
    }
}

fn main() {}
