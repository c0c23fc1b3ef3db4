// Kernel arguments of two iterations race only if the kernel's parameter
// writes (rustc knows it: the error is a const evaluation at the argument);
// a read-only parameter (`In<T>`) in every iteration does not race.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Lanes(x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>, out: &mut CudaSlice<f32>, n: usize) {
        lanes: for w in 0..n {
            sum: kernel kernels::Add<<<1, 32>>>(x, y, out, 32u32);
        }
    }
}

fn main() {}
