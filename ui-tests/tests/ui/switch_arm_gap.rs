use graph_runtime::cuda_graph;

cuda_graph! {
    graph Gap() {
        cond pick = 0;
        choose: switch pick {
            0 => { a: empty; }
            2 => { b: empty; }
        }
    }
}

fn main() {}
