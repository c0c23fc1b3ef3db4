use graph_runtime::cuda_graph;

cuda_graph! {
    graph Again() {
        a: empty;
        b: empty;
        c: empty;
        a -> [b, c];
        a -> b;
    }
}

fn main() {}
