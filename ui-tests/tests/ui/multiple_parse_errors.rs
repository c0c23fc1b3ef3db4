use graph_runtime::cuda_graph;

cuda_graph! {
    graph ManyParse() {
        a: nonsense;
        b: empty;
        c: kernel kernels::K<<<1>>>();
        d: fill;
        b -> d;
    }
}

fn main() {}
