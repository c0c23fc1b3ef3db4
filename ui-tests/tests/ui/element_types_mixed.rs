// Element types the graph spells as primitive types must agree: a copy
// keeps its element type, a fill's suffixed literal is of its buffer's
// type, and a host node's closure takes its host buffer's element type.
// Each is reported at the user's tokens.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Mixed(iters: &CudaSlice<u32>, x: &mut CudaSlice<f32>) {
        host seen: f32[4];
        buffer res: f32[1];
        into: copy iters => x;
        reset: fill res = 0.0f64;
        show: copy x => seen;
        sum: host move |seen: &[f64]| println!("{}", seen.iter().sum::<f64>());
        into -> show -> sum;
    }
}

fn main() {}
