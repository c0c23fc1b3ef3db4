use graph_runtime::cuda_graph;

cuda_graph! {
    #[use_node_priority]
    graph Priority(x: &Vec<f32>) {
        #[priority(1)]
        zero: fill x = 0.0f32;
    }
}

fn main() {}
