// An edge naming a node inside a placed fragment (`first.s2`): the error
// says that edges name the placement, and where to order that node.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Twice() {
        fragment step { s1: empty; s2: empty; s1 -> s2; }
        first: use step;
        after: empty;
        first.s2 -> after;
    }
}

fn main() {}
