// A syntax error in one graph does not hide another graph's checks, and
// the broken graph's type is still declared: code that uses it draws no
// follow-on error (and its parameters' imports stay used).
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Broken(x: &mut CudaSlice<f32>, n: u32) {
        a: kernal kernels::AddOne<<<1, 32>>>(x, n);
    }
    graph Racy(y: &mut CudaSlice<f32>) {
        a: fill y = 0.0f32;
        b: fill y = 1.0f32;
    }
}

fn main() {
    let _build = Broken::build;
}
