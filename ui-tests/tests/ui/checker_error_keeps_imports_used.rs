// A graph the checker refuses (a cycle) still uses the kernels it names:
// the import of them is not also reported unused.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;
use kernels::*;

cuda_graph! {
    graph Looped(x: &mut CudaSlice<f32>) {
        a: kernel AddOne<<<1, 32>>>(x, 32u32);
        b: kernel AddOne<<<1, 32>>>(x, 32u32);
        a -> b -> a;
    }
}

fn main() {}
