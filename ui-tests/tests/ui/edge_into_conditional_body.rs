use graph_runtime::cuda_graph;

cuda_graph! {
    graph Into() {
        cond go = 1;
        start: empty;
        branch: if go { work: empty; }
        start -> work;
    }
}

fn main() {}
