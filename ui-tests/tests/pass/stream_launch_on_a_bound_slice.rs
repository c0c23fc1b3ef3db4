// A stream launch of a declared kernel on a slice a live exec has bound:
// reached through the exec between its launches, as a view.
use graph_runtime::kernel::KernelDef;
use graph_runtime::{Graph, LaunchConfig};

fn main() {
    // Compiled, not run (no GPU here).
    let _ = run;
}

fn run() -> graph_runtime::Result<()> {
    let ctx = graph_runtime::driver::context(0)?;
    let stream = ctx.new_stream().unwrap();
    let add_one = kernels::AddOne::load(&ctx)?;
    let mut x = stream.alloc_zeros::<f32>(256).unwrap();
    let mut g = Graph::new(&ctx)?;
    let xb = g.bind_mut(&mut x);
    g.add_kernel("bump", &add_one, LaunchConfig::new(1, 256), (xb, 256), &[])?;
    let mut exec = g.instantiate()?;
    exec.launch(&stream)?;
    {
        let mut bound = exec.bound_mut(xb)?;
        let mut view = bound.view_mut();
        let mut launch = add_one.on(&stream);
        let vb = launch.bind_mut(&mut view);
        launch.launch(LaunchConfig::new(1, 256), (vb, 256))?;
    }
    exec.launch(&stream)?;
    Ok(())
}
