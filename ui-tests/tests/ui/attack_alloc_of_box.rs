// A graph allocation of a type with pointers in it: the device memory is
// uninitialised, so every `Box` read back from it would be a wild pointer.
use graph_runtime::Graph;

fn boxes<'a>(graph: &mut Graph<'a>) -> graph_runtime::Result<()> {
    let (_node, _boxes) = graph.add_alloc::<Box<u64>>("boxes", 4, &[])?;
    Ok(())
}

fn main() {
    let _ = boxes;
}
