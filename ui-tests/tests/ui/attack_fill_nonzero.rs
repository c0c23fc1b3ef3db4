// A fill node over `NonZeroU32`s: fills write raw byte patterns, and only
// the runtime's own plain-data element types may be filled.
use graph_runtime::{Buf, Graph};
use std::num::NonZeroU32;

fn ones<'a>(graph: &mut Graph<'a>, buf: Buf<'a, NonZeroU32>) -> graph_runtime::Result<()> {
    graph.add_fill("ones", buf, NonZeroU32::new(1).unwrap(), &[])?;
    Ok(())
}

fn main() {
    let _ = ones;
}
