// A loop variable names its block's iteration inside the block only: an
// operand or launch configuration of a node outside it (here, in the
// enclosing block, or after the block) that names it is refused, naming the
// block.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Scoped(x: &mut CudaSlice<f32>, lanes: usize, stages: usize) {
        #[disjoint(x)]
        lane: for w in 0..lanes {
            stage: for s in 0..stages {
                step: kernel kernels::AddOne<<<1, 32>>>(x.slice(w * 32..(w + 1) * 32), 32u32);
                step[s-1] -> step;
            }
            last: kernel kernels::AddOne<<<1, 32>>>(x.slice(s * 32..(s + 1) * 32), 32u32);
            stage -> last;
        }
        after: fill x.slice(w * 32..(w + 1) * 32) = 0.0f32;
        grid: kernel kernels::AddOne<<<w as u32 + 1, 32>>>(x, 32u32);
        lane -> after -> grid;
    }
}

fn main() {}
