// A kernel argument that swaps the graph being built for another one, so
// that the build returns a graph the macro's checks never saw.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Swap(x: &mut CudaSlice<f32>, n: u32, other: graph_runtime::Graph<'a>) {
        k: kernel kernels::Scale<<<1, 32>>>(x, 2.0f32, { let mut other = other; std::mem::swap(&mut __graph, &mut other); n });
    }
}

fn main() {}
