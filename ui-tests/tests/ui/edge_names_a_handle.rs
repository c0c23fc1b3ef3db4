use graph_runtime::cuda_graph;

cuda_graph! {
    graph HandleEdge() {
        cond go = 1;
        start: empty;
        branch: if go { work: empty; }
        start -> go;
    }
}

fn main() {}
