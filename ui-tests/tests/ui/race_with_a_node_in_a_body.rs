// A top-level node racing with a node inside a `while` body: the hint
// names the edge that can order them, to the conditional node (an edge
// into a body is not allowed).
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Loop(x_h: &[f32], x: &mut CudaSlice<f32>, counter: &mut CudaSlice<i32>) {
        up: copy x_h => x;
        cond again = 1;
        solve: while again {
            bump: kernel kernels::AddOne<<<1, 32>>>(x, 32u32);
            test: kernel kernels::CountdownStep<<<1, 1>>>(again, counter);
            bump -> test;
        }
    }
}

fn main() {}
