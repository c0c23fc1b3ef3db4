// A kernel parameter that passes a raw device address and reports no
// buffer use, implemented without `unsafe`: the graph's use-after-free,
// read-only and ownership checks would never see the memory.
use graph_runtime::kernel::{ArgEncoder, KernelParam};

struct RawAddress;

impl KernelParam for RawAddress {
    type Arg<'a> = u64;
    fn encode<'a>(arg: &u64, index: usize, out: &mut ArgEncoder<'a>) -> Result<(), graph_runtime::error::ArgumentRefusal> {
        <u64 as KernelParam>::encode(arg, index, out)
    }
}

fn main() {}
