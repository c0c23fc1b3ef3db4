use graph_runtime::cuda_graph;

cuda_graph! {
    graph Fill(x: &Vec<f32>) {
        zero: fill x;
    }
}

fn main() {}
