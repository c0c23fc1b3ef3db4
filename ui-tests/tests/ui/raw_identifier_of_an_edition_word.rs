// A raw identifier of a word only some editions reserve (`gen`, `dyn`,
// `try`, `async`, `await`) is refused: whether `r#gen` and `gen` are one
// name depends on the caller's edition, and the checks compare names.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Editions(r#gen: &mut CudaSlice<f32>) {
        a: fill r#gen = 0.0f32;
    }
}

fn main() {}
