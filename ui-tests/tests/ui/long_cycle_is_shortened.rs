// A cycle of 20 nodes names its first and last five and counts the rest.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Ring() {
        n0: empty; n1: empty; n2: empty; n3: empty; n4: empty;
        n5: empty; n6: empty; n7: empty; n8: empty; n9: empty;
        n10: empty; n11: empty; n12: empty; n13: empty; n14: empty;
        n15: empty; n16: empty; n17: empty; n18: empty; n19: empty;
        n0 -> n1 -> n2 -> n3 -> n4 -> n5 -> n6 -> n7 -> n8 -> n9 -> n10
           -> n11 -> n12 -> n13 -> n14 -> n15 -> n16 -> n17 -> n18 -> n19 -> n0;
    }
}

fn main() {}
