use graph_runtime::cuda_graph;

cuda_graph! {
    graph Typo() {
        stage1: empty;
        stage2: empty;
        stage1 -> stag2;
    }
}

fn main() {}
