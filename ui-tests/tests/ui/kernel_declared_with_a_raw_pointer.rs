// A kernel declared with a parameter type that is no kernel parameter (a
// raw pointer) is reported as such, at the declaration and at its uses:
// never as a wrong argument count (the argument checks' impls are not
// `do_not_recommend`, which would hide the reason).
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

const SOURCE: &str = r#"extern "C" __global__ void k(float* x) {}"#;

graph_runtime::declare_kernel! {
    // SAFETY: a false promise: `*mut f32` is no parameter type.
    pub Raw: (*mut f32,) = unsafe cuda_c(SOURCE, "k");
}

cuda_graph! {
    graph UseRaw(x: &mut CudaSlice<f32>) {
        a: kernel Raw<<<1, 32>>>(x);
    }
}

fn main() {}
