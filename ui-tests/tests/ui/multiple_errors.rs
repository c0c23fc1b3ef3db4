use graph_runtime::cuda_graph;

cuda_graph! {
    graph Many() {
        cond go;
        a: empty;
        a: empty;
        b: empty;
        b -> c;
        b -> b;
        branch: if go { h: host || (); }
        leak: alloc u8[4];
    }
}

fn main() {}
