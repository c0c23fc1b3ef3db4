use graph_runtime::cuda_graph;

cuda_graph! {
    graph Twice(n: usize) {
        buf: alloc u8[n];
        f1: free buf;
        f2: free buf;
        buf -> f1 -> f2;
    }
}

fn main() {}
