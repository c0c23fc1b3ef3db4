use graph_runtime::cuda_graph;

cuda_graph! {
    graph Copy(a: &Vec<f32>, b: &Vec<f32>) {
        c: copy a -> b;
    }
}

fn main() {}
