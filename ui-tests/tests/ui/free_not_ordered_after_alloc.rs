// A free with no path from its alloc node could free memory before it is
// allocated: refused at the freed buffer, once (its uses are not reported
// again against the free).
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Unordered(n: u32) {
        tmp: alloc f32[n];
        fill: kernel kernels::Iota<<<1, 32>>>(tmp, n);
        done: free tmp;
        tmp -> fill;
    }
}

fn main() {}
