// An allocation in a repeated block is made once per iteration: it is used
// and freed in that iteration, and cannot escape; one made outside is not
// freed by every iteration.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph PerIteration(n: usize) {
        once: alloc f32[32];
        layers: for l in 0..n {
            tmp: alloc f32[32];
            fill_tmp: kernel kernels::Iota<<<1, 32>>>(tmp, 32u32);
            #[escape]
            kept: alloc f32[32];
            drop_once: free once;
            alloc scratch: f32[32] {
                in_scope: kernel kernels::Iota<<<1, 32>>>(scratch, 32u32);
            }
            outside_scope: kernel kernels::Iota<<<1, 32>>>(scratch, 32u32);
            tmp -> fill_tmp -> scratch -> outside_scope;
            kept -> drop_once;
        }
        later: kernel kernels::Iota<<<1, 32>>>(tmp, 32u32);
        done: free tmp;
        once -> layers -> later -> done;
    }
}

fn main() {}
