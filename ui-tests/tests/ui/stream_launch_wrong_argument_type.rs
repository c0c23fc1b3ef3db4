// A stream launch takes the declaration's argument types, as a kernel node
// does: a plain slice is not a bound buffer.
use graph_runtime::kernel::KernelDef;
use graph_runtime::LaunchConfig;

fn main() -> graph_runtime::Result<()> {
    let ctx = graph_runtime::driver::context(0)?;
    let stream = ctx.new_stream().unwrap();
    let add_one = kernels::AddOne::load(&ctx)?;
    let mut x = stream.alloc_zeros::<f32>(256).unwrap();
    add_one.on(&stream).launch(LaunchConfig::new(1, 256), (&mut x, 256u32))
}
