// An `OutLen` parameter writes its buffer: a slice the graph only reads
// cannot go there.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Product(
        offsets: &CudaSlice<u32>, cols: &CudaSlice<u32>, values: &CudaSlice<f32>,
        x: &CudaSlice<f32>, y: &CudaSlice<f32>, n: u32, nnz: u32, m: u32,
    ) {
        ax: kernel kernels::CsrSpmv<<<n.div_ceil(128), 128>>>(offsets, cols, values, x, y, n, nnz, m);
    }
}

fn main() {}
