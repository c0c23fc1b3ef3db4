// Outside a block, its label stands for all its iterations: its nodes are
// not named there, and an edge inside it joins nodes of its body; an index
// names an iteration of the block holding the edge, by its loop variable.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Crossing(n: usize) {
        before: empty;
        outer: for w in 0..n {
            inner: for i in 0..n {
                step: empty;
                step[w-1] -> step;
                before -> step;
            }
        }
        after: empty;
        before -> outer;
        step -> after;
        before[i-1] -> after;
    }
}

fn main() {}
