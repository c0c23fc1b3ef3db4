// The exec hands out views of a bound slice, never `&mut CudaSlice`: a
// caller cannot swap another slice in under the graph's nodes.
use graph_runtime::kernel::KernelDef;
use graph_runtime::{Graph, LaunchConfig};

fn main() -> graph_runtime::Result<()> {
    let ctx = graph_runtime::driver::context(0)?;
    let stream = ctx.new_stream().unwrap();
    let add_one = kernels::AddOne::load(&ctx)?;
    let mut x = stream.alloc_zeros::<f32>(256).unwrap();
    let mut other = stream.alloc_zeros::<f32>(256).unwrap();
    let mut g = Graph::new(&ctx)?;
    let xb = g.bind_mut(&mut x);
    g.add_kernel("bump", &add_one, LaunchConfig::new(1, 256), (xb, 256), &[])?;
    let mut exec = g.instantiate()?;
    let mut bound = exec.bound_mut(xb)?;
    std::mem::swap(&mut *bound, &mut other);
    Ok(())
}
