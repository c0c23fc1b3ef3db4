use graph_runtime::cuda_graph;

cuda_graph! {
    graph NoArms() {
        cond pick = 0;
        choose: switch pick {}
    }
}

fn main() {}
