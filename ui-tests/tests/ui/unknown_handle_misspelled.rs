// A misspelled conditional handle: the error offers the declared handle
// it resembles, and that handle is not also reported as driving nothing.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Retry(counter: &mut CudaSlice<i32>, visits: &mut CudaSlice<i32>) {
        cond again = 1;
        repeat: while agian {
            step: kernel kernels::Countdown<<<1, 1>>>(again, counter, visits);
        }
    }
}

fn main() {}
