// A conditional handle must drive a conditional node: CUDA requires it
// ("must be associated with a conditional node in this graph"), and an
// unused handle may fail the instantiation. One set by a kernel and read
// by nothing is refused at its declaration.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph SetsOnly() {
        cond done = 0;
        finish: kernel kernels::SetCondition<<<1, 1>>>(done, 1u32);
    }
}

fn main() {}
