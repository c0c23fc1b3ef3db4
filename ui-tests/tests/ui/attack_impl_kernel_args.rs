// A parameter list of its own that passes a buffer's address as a plain
// integer, so the buffer's use is never reported to the graph.
use graph_runtime::kernel::{ArgEncoder, KernelArgs, KernelParam};
use graph_runtime::Buf;

struct Untracked;

impl KernelArgs for Untracked {
    type Args<'a> = (Buf<'a, f32>,);
    fn encode<'a>(args: &(Buf<'a, f32>,), out: &mut ArgEncoder<'a>) -> Result<(), graph_runtime::error::ArgumentRefusal> {
        <u64 as KernelParam>::encode(&args.0.device_ptr(), 0, out)
    }
}

fn main() {}
