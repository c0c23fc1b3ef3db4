use graph_runtime::cuda_graph;

cuda_graph! {
    graph Forever(x: &Vec<f32>) {
        cond again = 1;
        repeat: while again {
            step: kernel kernels::K<<<1, 32>>>(x);
        }
    }
}

fn main() {}
