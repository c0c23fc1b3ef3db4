use graph_runtime::cuda_graph;

cuda_graph! {
    graph External(x: &Vec<f32>) {
        k: kernel kernels::K<<<1, 32>>>(x);
        done: free x;
        k -> done;
    }
}

fn main() {}
