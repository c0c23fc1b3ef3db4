// A kernel after a programmatic or launch-order edge completes after the
// kernel before it only by waiting for it: `#[disabled]`, it waits for
// nothing, and `done` could free `buf` while `a` still writes it.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Early(x: &mut CudaSlice<f32>) {
        buf: alloc f32[256];
        a: kernel kernels::AddOne<<<1, 256>>>(buf, 256u32);
        #[disabled]
        b: kernel kernels::PdlAddOne<<<1, 32>>>(x, 32u32);
        done: free buf;
        buf -> a -(launch_order)-> b -> done;
    }
}

fn main() {}
