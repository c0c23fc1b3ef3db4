// A kernel whose buffers have lengths of their own (CSR: row offsets of
// n + 1, indices and values of nnz, x of m, y of n), declared with
// `Count<C>`, `InLen` and `OutLen`: two products read one matrix at once.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph TwoProducts(
        offsets: &CudaSlice<u32>, cols: &CudaSlice<u32>, values: &CudaSlice<f32>,
        x: &CudaSlice<f32>, z: &CudaSlice<f32>,
        y: &mut CudaSlice<f32>, w: &mut CudaSlice<f32>,
        n: u32, nnz: u32, m: u32,
    ) {
        ax: kernel kernels::CsrSpmv<<<n.div_ceil(128), 128>>>(offsets, cols, values, x, y, n, nnz, m);
        az: kernel kernels::CsrSpmv<<<n.div_ceil(128), 128>>>(offsets, cols, values, z, w, n, nnz, m);
    }
}

fn main() {}
