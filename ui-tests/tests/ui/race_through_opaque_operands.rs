// An operand whose form the checker cannot read (a block, parentheses, a
// function call) counts as a use of every buffer it names, whole: hiding
// `x` in `{ x }` does not hide the race between the lanes. Its length
// (`y.len()`) is not a use of its memory.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Hidden(x: &mut CudaSlice<f32>, n: usize) {
        lanes: for w in 0..n {
            k: kernel kernels::AddOne<<<1, 32>>>({ x }, 32u32);
        }
    }
}

cuda_graph! {
    graph Wrapped(x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>) {
        filled: fill x = 1.0f32;
        wrapped: kernel kernels::AddOne<<<1, 32>>>(::core::convert::identity(x), 32u32);
        // A method other than `slice` may return any buffer it names.
        other: fill y = 1.0f32;
        picked: kernel kernels::AddOne<<<1, 32>>>(x.try_slice(0..32).unwrap_or(y), y.len() as u32);
    }
}

fn main() {}
