// Inside a repeated block, an edge joins members of its body. A node
// outside it is ordered against the block itself, in the edge's own
// direction; the block's own label names no member (reported once for
// an edge that names it twice).
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Crossing(n: usize) {
        lane: for w in 0..n {
            stage: for s in 0..n {
                step: empty;
            }
            fold: empty;
            stage -> fold;
            fold -> join;
            join -> stage;
            lane[w-1] -> stage;
            lane[w-1] -> lane;
        }
        join: empty;
        lane -> join;
    }
}

fn main() {}
