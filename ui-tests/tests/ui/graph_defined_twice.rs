// Two graphs of one name in one invocation: one error, at the second name.
use graph_runtime::cuda_graph;
cuda_graph! {
    graph Same() { a: empty; }
    graph Same() { b: empty; }
}
fn main() {}
