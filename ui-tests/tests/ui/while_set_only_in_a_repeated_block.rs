// A `while` whose body sets its handle only inside a repeated block: a
// count of 0 would leave the loop running. Said so, naming the block.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Spin(counter: &mut graph_runtime::cudarc::driver::CudaSlice<i32>, n: usize) {
        cond more = 1;
        spin: while more {
            steps: for i in 0..n {
                step: kernel kernels::CountdownStep<<<1, 1>>>(more, counter);
                step[i-1] -> step;
            }
        }
    }
}

fn main() {}
