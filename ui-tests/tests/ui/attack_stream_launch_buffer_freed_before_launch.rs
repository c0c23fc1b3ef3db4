// A buffer bound to a stream launch stays borrowed until the launch is
// queued: it cannot be freed (dropped) in between.
use graph_runtime::kernel::KernelDef;
use graph_runtime::LaunchConfig;

fn main() -> graph_runtime::Result<()> {
    let ctx = graph_runtime::driver::context(0)?;
    let stream = ctx.new_stream().unwrap();
    let add_one = kernels::AddOne::load(&ctx)?;
    let mut x = stream.alloc_zeros::<f32>(256).unwrap();
    let mut launch = add_one.on(&stream);
    let xb = launch.bind_mut(&mut x);
    drop(x);
    launch.launch(LaunchConfig::new(1, 256), (xb, 256))
}
