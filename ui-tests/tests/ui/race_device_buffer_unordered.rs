// Two kernels write a device buffer the graph owns, unordered: a data
// race, as on a buffer bound `&mut`.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Racy(n: u32) {
        buffer acc: f32[n];
        first: kernel kernels::AddOne<<<n.div_ceil(256), 256>>>(acc, n);
        second: kernel kernels::AddOne<<<n.div_ceil(256), 256>>>(acc, n);
    }
}

fn main() {}
