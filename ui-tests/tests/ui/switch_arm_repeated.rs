// A repeated switch arm is named as repeated, not as a wrong number.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Pick() {
        cond which = 0;
        choose: switch which {
            0 => { a: empty; }
            0 => { b: empty; }
        }
    }
}

fn main() {}
