// A use ordered after the free: the hint moves the free after the use
// instead of adding `late -> done`, which would close a cycle.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Late(n: u32) {
        tmp: alloc f32[n];
        early: kernel kernels::Iota<<<1, 32>>>(tmp, n);
        done: free tmp;
        late: kernel kernels::Iota<<<1, 32>>>(tmp, n);
        tmp -> early -> done -> late;
    }
}

fn main() {}
