// A launch dimension is a `u32` (or a pair or triple of them): a `usize`
// grid, as `len.div_ceil(256)` gives, is refused at its own tokens with
// the conversion to write.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Wide(x: &mut CudaSlice<f32>, len: usize) {
        step: kernel kernels::AddOne<<<len.div_ceil(256), 256>>>(x, len as u32);
    }
}

fn main() {}
