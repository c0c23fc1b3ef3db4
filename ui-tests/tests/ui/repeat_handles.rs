// A handle drives one conditional node: one declared outside a block cannot
// drive a node of every iteration, and one declared inside is not seen
// outside. Setters of one handle in every iteration must be ordered.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Handles(n: usize) {
        cond outside = 1;
        cond set_by_all;
        each: for i in 0..n {
            cond inside = 1;
            maybe: if outside { a: empty; }
            set: kernel kernels::SetCondition<<<1, 1>>>(set_by_all, 1u32);
        }
        later: if inside { b: empty; }
        tested: if set_by_all { c: empty; }
        each -> later -> tested;
    }
}

fn main() {}
