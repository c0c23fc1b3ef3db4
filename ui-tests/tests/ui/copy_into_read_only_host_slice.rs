// A copy into a host slice the graph takes shared (`&[T]`) is refused at
// the destination, naming the parameter type that lets the graph write it.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph ReadBack(x: &CudaSlice<f32>, x_h: &[f32], y_h: &Vec<f32>) {
        back: copy x => x_h;
        again: copy x => y_h;
    }
}

fn main() {}
