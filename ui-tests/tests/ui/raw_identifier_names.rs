// A Rust keyword cannot label a node or a block, nor name a handle, even
// written raw: generated names are made from them (other raw names are
// the plain name, as in Rust; the DSL's own keywords are plain labels).
use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Raw(x: &mut CudaSlice<f32>, n: usize) {
        cond r#match;
        r#type: fill x = 0.0f32;
        alloc: empty;
        r#loop: for i in 0..n {
            step: empty;
        }
        r#type -> alloc -> r#loop;
    }
}

fn main() {}
