// A copy destination that reports a device buffer as read (its source
// endpoint): a copy could then write a slice the graph only borrowed
// shared, past the read-only check.
use graph_runtime::memory::{CopyDestination, CopySource, Endpoint};
use graph_runtime::Buf;

struct WriteAnyway<'a>(Buf<'a, f32>);

impl<'a> CopyDestination<'a, f32> for WriteAnyway<'a> {
    fn endpoint(self) -> Endpoint {
        <Buf<'a, f32> as CopySource<'a, f32>>::endpoint(self.0)
    }
}

fn main() {}
