// The expression form: an operand passed shared (`&x`) to a parameter the
// kernel writes (`Out<T>`) is a compile error at the operand (it failed
// only when the graph was built).
use graph_runtime::cudarc::driver::{CudaContext, CudaSlice};
use graph_runtime::cuda_graph;
use std::sync::Arc;

fn build(ctx: &Arc<CudaContext>, x: CudaSlice<f32>, mut y: CudaSlice<f32>, n: u32) {
    let graph = cuda_graph! {
        graph(ctx) {
            read:  kernel kernels::Add<<<1, 32>>>(&x, &x, &mut y, n);
            write: kernel kernels::AddOne<<<1, 32>>>(&x, n);
            read -> write;
        }
    };
    let _ = graph;
}

fn main() {}
