// A view of a bound slice reached through the exec borrows the exec: it
// cannot launch while the view lives (the graph would write what the view
// reads or writes).
use graph_runtime::kernel::KernelDef;
use graph_runtime::{Graph, LaunchConfig};

fn main() -> graph_runtime::Result<()> {
    let ctx = graph_runtime::driver::context(0)?;
    let stream = ctx.new_stream().unwrap();
    let add_one = kernels::AddOne::load(&ctx)?;
    let mut x = stream.alloc_zeros::<f32>(256).unwrap();
    let mut g = Graph::new(&ctx)?;
    let xb = g.bind_mut(&mut x);
    g.add_kernel("bump", &add_one, LaunchConfig::new(1, 256), (xb, 256), &[])?;
    let mut exec = g.instantiate()?;
    let mut bound = exec.bound_mut(xb)?;
    exec.launch(&stream)?;
    stream.memcpy_htod(&[1.0f32; 256], &mut bound.view_mut()).unwrap();
    Ok(())
}
