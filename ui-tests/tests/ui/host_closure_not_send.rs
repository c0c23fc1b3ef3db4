// A host closure that moves in an `Rc` (host nodes run on the driver's
// thread): rustc's errors at the closure, not over the whole invocation.
use graph_runtime::cuda_graph;
use std::cell::Cell;
use std::rc::Rc;

cuda_graph! {
    graph Count(count: Rc<Cell<u32>>) {
        tick: host move || count.set(count.get() + 1);
    }
}

fn main() {}
