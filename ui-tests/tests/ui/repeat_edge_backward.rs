// An edge between iterations goes forward, from the earlier iteration:
// `a -> b[i-1]` points back, and (with `b -> a` in the body) could cycle.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Back(n: usize) {
        steps: for i in 0..n {
            a: empty;
            b: empty;
            b -> a;
            a -> b[i-1];
        }
    }
}

fn main() {}
