// Near-misses a newcomer writes, each reported at its tokens with what to
// write, and the statements after each still parsed: a typed handle, a
// misspelled node kind, a Rust keyword as a label, a repeated block
// without its label, an edge statement missing its `;`, and a wrong
// arrow (`=>`), which is not taken for a missing `;`.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph NearMisses(x: &mut CudaSlice<f32>, n: u32, layers: usize) {
        cond again: u32 = 1;
        a: kernal kernels::AddOne<<<1, 32>>>(x, n);
        loop: fill x = 0.0f32;
        for l in 0..layers {
            b: empty;
        }
        c: empty;
        d: empty;
        c -> d
        e: empty;
        c => e;
    }
}

fn main() {}
