// A repeated block takes `#[disjoint]` only, naming buffers its nodes use.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Attributes(x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>, n: usize) {
        #[disabled]
        first: for i in 0..n {
            a: kernel kernels::AddOne<<<1, 32>>>(x, 32u32);
            a[i-1] -> a;
        }
        #[disjoint(y)]
        second: for i in 0..n {
            b: kernel kernels::AddOne<<<1, 32>>>(x.slice(i..i + 1), 1u32);
        }
        first -> second;
    }
}

fn main() {}
