// A slice the graph binds read-only (`&CudaSlice`) passed where the kernel
// writes (`Out<T>`): a compile error at the argument (it failed only when
// the graph was built).
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph ReadOnly(x: &CudaSlice<f32>, n: u32) {
        bump: kernel kernels::AddOne<<<1, 32>>>(x, n);
    }
}

fn main() {}
