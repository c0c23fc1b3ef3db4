use graph_runtime::cuda_graph;

cuda_graph! {
    graph Edges() {
        a: empty;
        b: empty;
        #[disabled]
        a -> b;
    }
}

fn main() {}
