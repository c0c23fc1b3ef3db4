// A graph allocation (with options) of a type with a niche: zeroed or
// uninitialised device memory is not a valid `NonZeroU32`.
use graph_runtime::memory::AllocOptions;
use graph_runtime::Graph;
use std::num::NonZeroU32;

fn never_zero<'a>(graph: &mut Graph<'a>) -> graph_runtime::Result<()> {
    let options = AllocOptions::default();
    let (_node, _buf) = graph.add_alloc_with::<NonZeroU32>("never_zero", 16, &options, &[])?;
    Ok(())
}

fn main() {
    let _ = never_zero;
}
