use graph_runtime::cuda_graph;

cuda_graph! {
    graph NoHandle() {
        branch: if missing { work: empty; }
    }
}

fn main() {}
