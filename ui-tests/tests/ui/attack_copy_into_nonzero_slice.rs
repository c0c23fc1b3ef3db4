// A copy from device memory into host `NonZeroU32`s: a zero on the device
// would become a `NonZeroU32` holding 0.
use graph_runtime::{Buf, Graph};
use std::num::NonZeroU32;

fn read_back<'a>(
    graph: &mut Graph<'a>,
    device: Buf<'a, NonZeroU32>,
    host: &'a mut Vec<NonZeroU32>,
) -> graph_runtime::Result<()> {
    graph.add_copy("read_back", device, host, &[])?;
    Ok(())
}

fn main() {
    let _ = read_back;
}
