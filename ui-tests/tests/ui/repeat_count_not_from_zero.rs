// A repeated block counts from 0; other index forms are refused.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph FromOne(n: usize) {
        steps: for i in 1..n {
            a: empty;
        }
    }
}

cuda_graph! {
    graph Strange(n: usize) {
        steps: for i in 0..n {
            a: empty;
            a[i*2] -> a;
        }
    }
}

fn main() {}
