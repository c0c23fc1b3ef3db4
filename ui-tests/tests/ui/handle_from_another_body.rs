use graph_runtime::cuda_graph;

cuda_graph! {
    graph Sibling() {
        cond outer = 1;
        a: if outer {
            cond inner = 1;
            x: empty;
        }
        b: if inner { y: empty; }
    }
}

fn main() {}
