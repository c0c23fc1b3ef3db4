// A kernel inside a `while` body and a kernel beside the loop both set the
// loop's handle: the loop may run while the other kernel sets it.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Racy(counter: &mut CudaSlice<i32>) {
        cond more = 1;
        again: kernel kernels::SetCondition<<<1, 1>>>(more, 1u32);
        spin: while more {
            step: kernel kernels::CountdownStep<<<1, 1>>>(more, counter);
        }
    }
}

fn main() {}
