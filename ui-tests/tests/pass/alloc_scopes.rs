// Alloc scopes, nested, with edges into and out of them.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Scoped(n: usize) {
        start: empty;
        alloc outer: f32[n] {
            k1: kernel kernels::K<<<1, 32>>>(outer);
            alloc inner: f32[n] {
                k2: kernel kernels::K<<<1, 32>>>(outer, inner);
                k3: kernel kernels::K<<<1, 32>>>(inner);
                k2 -> k3;
            }
            k1 -> inner;
        }
        finish: empty;
        start -> outer -> finish;
    }
}

fn main() {
    assert_eq!(Scoped::LABELS, ["start", "k1", "k2", "k3", "finish"]);
    assert!(Scoped::DOT.contains("\"outer\" -> \"k1\" [style=dotted];"));
    assert!(Scoped::DOT.contains("\"inner.free\" -> \"outer.free\" [style=dotted];"));
}
