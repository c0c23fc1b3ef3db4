// Where device buffers (`buffer name: T[len];`) may be declared, and the
// names they may not take.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Rules(x: &mut CudaSlice<f32>, counter: &mut CudaSlice<i32>, n: u32) {
        buffer acc: f32[n];
        buffer acc: f32[n];
        host acc: f32[1];
        buffer x: f32[n];
        buffer launch: f32[1];
        #[disjoint]
        buffer marked: f32[1];
        buffer bump: f32[1];
        bump: kernel kernels::AddOne<<<1, 1>>>(acc, n);
        cond again = 1;
        loop_: while again {
            buffer inner: f32[n];
            step: kernel kernels::CountdownStep<<<1, 1>>>(again, counter);
        }
        tile: for i in 0..2 {
            buffer per_tile: f32[n];
        }
    }
}

fn main() {
    let ctx = graph_runtime::driver::context(0).unwrap();
    let _graph = cuda_graph!(graph(&ctx) {
        buffer anonymous: f32[4];
        fill_it: fill anonymous = 0.0f32;
    });
}
