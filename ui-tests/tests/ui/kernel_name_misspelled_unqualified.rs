// A misspelled kernel name imported by `use`: rustc's one error at the
// name, with its suggestion. (The node table named the kernel as a
// generic argument, which rustc reported a second time, suggesting to
// make it a type parameter of the graph.)
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
