// A misspelled kernel path (with its module) is rustc's one error, at the
// name, with its suggestion: not repeated for each place the expansion
// names the kernel (an unqualified name: kernel_name_misspelled_unqualified.rs).
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph G(x: &mut CudaSlice<f32>) {
        a: kernel kernels::AddOen<<<1, 32>>>(x, 32u32);
        b: kernel kernels::AddOne<<<1, 32>>>(x, 32u32);
        a -> b;
    }
}

fn main() {}
