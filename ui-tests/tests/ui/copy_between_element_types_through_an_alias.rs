// A copy between element types the graph spells through an alias (which
// only rustc can see through): rustc's error at the destination, in the
// copy's terms, not over the whole invocation.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

type Big = f64;

cuda_graph! {
    graph Widen(x: &mut CudaSlice<Big>, y: &mut CudaSlice<f32>) {
        c: copy x => y;
    }
}

fn main() {}
