use graph_runtime::cuda_graph;

cuda_graph! {
    graph Named() { a: empty; }
    graph(&ctx) { b: empty; }
}

fn main() {}
