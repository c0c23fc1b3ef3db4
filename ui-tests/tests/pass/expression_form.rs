// The expression form: a graph built from variables in scope.
use graph_runtime::cuda_graph;

fn main() {
    let ctx = ();
    let outline = cuda_graph! {
        graph(&ctx) {
            cond go = 1;
            a: empty;
            b: kernel kernels::K<<<1, 32>>>(go);
            c: if go { d: empty; }
            a -> b -> c;
        }
    };
    assert_eq!(outline.labels, ["a", "b", "c", "d"]);
    assert!(outline.dot.contains("\"a\" -> \"b\";"));
    let _ = ctx;
}
