// An allocation another graph made is freed once.
use graph_runtime::{cuda_graph, Escaped};

cuda_graph! {
    graph FreeTwice(data: Escaped<f32>, n: u32) {
        bump: kernel kernels::AddOne<<<n.div_ceil(256), 256>>>(data, n);
        first: free data;
        second: free data;
        bump -> first -> second;
    }
}

fn main() {}
