// A top-level conditional handle is a field of the graph's `bound()`
// (per-node updates of the kernels that set it pass it again), as are host
// buffers, device buffers and escaping allocations: one name, one field;
// and names starting with `__` are the generated code's.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Clashes() {
        cond seen = 1;
        cond acc = 1;
        cond kept = 1;
        cond __borrow = 1;
        host seen: u32[4];
        buffer acc: u32[4];
        #[escape]
        kept: alloc u32[4];
        spin: if seen { a: empty; }
        other: if acc { b: empty; }
        third: if kept { c: empty; }
        fourth: if __borrow { d: empty; }
        kept -> third;
    }
}

fn main() {}
