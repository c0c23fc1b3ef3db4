use graph_runtime::cuda_graph;

cuda_graph! {
    graph OutOf() {
        cond go = 1;
        start: empty;
        branch: if go {
            work: empty;
            work -> start;
        }
    }
}

fn main() {}
