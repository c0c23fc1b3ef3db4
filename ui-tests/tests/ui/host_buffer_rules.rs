// Where host buffers may be declared and how host nodes name them.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Rules(x: &mut CudaSlice<f32>, counter: &mut CudaSlice<i32>, n: u32) {
        host seen: f32[n];
        host seen: f32[n];
        host n: f32[1];
        host launch: f32[1];
        cond again = 1;
        loop_: while again {
            host inner: f32[n];
            back: copy seen => x;
            step: kernel kernels::CountdownStep<<<1, 1>>>(again, counter);
            back -> step;
        }
        unknown: host |other: &[f32]| drop(other);
        two: host |seen: &[f32], more: &[f32]| drop((seen, more));
        odd: host |seen: Vec<f32>| drop(seen);
        tile: for i in 0..2 {
            host per_tile: f32[n];
        }
    }
}

fn main() {}
