// Two products read one matrix, passed as a struct of buffers
// (`kernels::Csr`), at the same time: reads do not race.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph TwoProducts(
        offsets: &CudaSlice<u32>, cols: &CudaSlice<u32>, values: &CudaSlice<f32>,
        x: &CudaSlice<f32>, z: &CudaSlice<f32>,
        y: &mut CudaSlice<f32>, w: &mut CudaSlice<f32>,
        n: u32, nnz: u32, m: u32,
    ) {
        ax: kernel kernels::CsrSpmvStruct<<<n.div_ceil(128), 128>>>(
            kernels::Csr { offsets, cols, values, n, nnz }, x, y, m);
        az: kernel kernels::CsrSpmvStruct<<<n.div_ceil(128), 128>>>(
            kernels::Csr { offsets, cols, values, n, nnz }, z, w, m);
    }
}

fn main() {}
