// A kernel that sets a handle while the conditional node reads it races
// with the read (a default does not order them): ordered before, after,
// or inside the node's bodies, as a `while` body's setter is.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph SetWhileRead(visits: &mut graph_runtime::cudarc::driver::CudaSlice<i32>) {
        cond go = 1;
        clear: kernel kernels::SetCondition<<<1, 1>>>(go, 0u32);
        branch: if go { m: kernel kernels::Mark<<<1, 1>>>(visits, 0u32); }
    }
}

fn main() {}
