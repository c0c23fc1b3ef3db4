use graph_runtime::cuda_graph;

cuda_graph! {
    graph Shared() {
        cond go = 1;
        first: if go { a: empty; }
        second: if go { b: empty; }
        first -> second;
    }
}

fn main() {}
