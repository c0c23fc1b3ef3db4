// A kernel that sets a top-level conditional handle keeps a per-node
// update: the handle is a field of the graph's `bound()`, passed again.
// A graph allocation named like a handle, declared after it, shadows the
// handle in the nodes after it, never in `bound()`.
use graph_runtime::__doc_kernels as kernels;
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Spin() {
        cond again = 1;
        spin: while again {
            stop: kernel kernels::SetCondition<<<1, 1>>>(again, 0u32);
        }
    }

    graph Shadowed() {
        cond t = 1;
        pick: if t { e: empty; }
        t: alloc u32[4];
        fill_t: fill t = 0u32;
        done: free t;
        pick -> t -> fill_t -> done;
    }
}

#[allow(dead_code)]
fn handle_of(graph: &Shadowed<'_>) -> graph_runtime::CondHandle {
    graph.bound().t
}

/// Lets the loop run once more per launch (`1`) or stop (`0`).
#[allow(dead_code)]
fn set_going(graph: &Spin<'_>, exec: &mut SpinExec<'_>, going: u32) -> graph_runtime::Result<()> {
    let bound = graph.bound();
    let handle: graph_runtime::CondHandle = bound.again;
    exec.stop().set_args((handle, going))
}

fn main() {}
