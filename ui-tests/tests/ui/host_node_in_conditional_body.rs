use graph_runtime::cuda_graph;

cuda_graph! {
    graph BodyHost() {
        cond go = 1;
        branch: if go {
            report: host || println!("in a body");
        }
    }
}

fn main() {}
