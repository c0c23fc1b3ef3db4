// Kernels unordered on one buffer: rustc knows whether their parameters
// write it (`Out<T>`), so the race is a const error at each writing
// argument; two readers (`In<T>`) of one buffer do not race.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Racy(a: &mut CudaSlice<f32>, b: &mut CudaSlice<f32>, out: &mut CudaSlice<f32>, n: u32) {
        sum: kernel kernels::Add<<<1, 32>>>(a, b, out, n);
        diff: kernel kernels::Add<<<1, 32>>>(a, b, out, n);
        bump: kernel kernels::AddOne<<<1, 32>>>(a, n);
    }
}

fn main() {}
