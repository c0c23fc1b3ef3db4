use graph_runtime::cuda_graph;

cuda_graph! {
    graph Looping() {
        a: empty;
        b: empty;
        c: empty;
        a -> b -> c;
        c -> a;
    }
}

fn main() {}
