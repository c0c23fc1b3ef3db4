// A fill writes 1, 2, 4 and 8-byte scalars: a 16-byte value is refused at
// the value.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Wide(x: &mut CudaSlice<u128>) {
        clear: fill x = 7u128;
    }
}

fn main() {}
