use graph_runtime::cuda_graph;

cuda_graph! {
    graph TwoHandles() {
        cond go = 1;
        cond go = 0;
        branch: if go { work: empty; }
    }
}

fn main() {}
