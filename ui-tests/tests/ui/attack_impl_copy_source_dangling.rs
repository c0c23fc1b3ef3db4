// A copy source that hands the runtime the address of a temporary vector:
// the copy node would read freed host memory at every launch.
use graph_runtime::memory::{CopySource, Endpoint};

struct Temporary;

impl<'a> CopySource<'a, u8> for Temporary {
    fn endpoint(self) -> Endpoint {
        let scratch = vec![0u8; 1 << 20];
        <&[u8] as CopySource<'_, u8>>::endpoint(&scratch)
    }
}

fn main() {}
