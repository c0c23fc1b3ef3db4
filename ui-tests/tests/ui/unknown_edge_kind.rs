use graph_runtime::cuda_graph;

cuda_graph! {
    graph EdgeKind() {
        a: kernel kernels::K<<<1, 1>>>();
        b: kernel kernels::K<<<1, 1>>>();
        a -(eager)-> b;
    }
}

fn main() {}
