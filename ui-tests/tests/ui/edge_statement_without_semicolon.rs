// Two edge statements, the first without its `;`: the error says so at
// the first one's last label.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Chain() {
        a: empty;
        b: empty;
        c: empty;
        a -> b
        b -> c;
    }
}

fn main() {}
