// An allocation that escapes one graph is a parameter of type `Escaped<T>`
// of another, which uses it and frees it with a free node.
use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::{cuda_graph, Escaped};

cuda_graph! {
    graph Make(n: u32) {
        #[escape]
        data: alloc f32[n];
        fill: kernel kernels::Iota<<<n.div_ceil(256), 256>>>(data, n);
        data -> fill;
    }

    graph UseAndFree(data: Escaped<f32>, out: &mut CudaSlice<f32>, n: u32) {
        bump: kernel kernels::AddOne<<<n.div_ceil(256), 256>>>(data, n);
        copy: copy data => out;
        done: free data;
        bump -> copy -> done;
    }
}

fn main() {}
