// A handle's default is a `u32` (0 or 1): a `bool` is reported at the value.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Defaulted(visits: &mut graph_runtime::cudarc::driver::CudaSlice<i32>) {
        cond go = true;
        branch: if go { m: kernel kernels::Mark<<<1, 1>>>(visits, 0u32); }
    }
}

fn main() {}
