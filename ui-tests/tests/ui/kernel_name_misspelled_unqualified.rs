// A misspelled kernel name imported by `use`: rustc's error at the name,
// with its suggestion, twice (the node table's field and the builder name
// the kernel; a path with a module is reported once, as in
// kernel_name_misspelled.rs), the first with rustc's unhelpful "missing a
// type parameter". Kept to show the known duplicate.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;
use kernels::AddOne;

cuda_graph! {
    graph G(x: &mut CudaSlice<f32>) {
        a: kernel AddOen<<<1, 32>>>(x, 32u32);
        b: kernel AddOne<<<1, 32>>>(x, 32u32);
        a -> b;
    }
}

fn main() {}
