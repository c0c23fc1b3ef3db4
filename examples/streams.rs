//! One set of kernel declarations, two ways to run them: a `cuda_graph!`
//! pipeline, and the same kernels launched one by one on streams
//! (`Kernel::on`), with the same argument checks. A one-off initialisation
//! runs on the stream before the graph; a validation pass on a second
//! stream after both, ordered by cudarc's event tracking, not by a
//! synchronize.

#[path = "common.rs"]
mod common;

use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::kernel::KernelDef;
use graph_runtime::{cuda_graph, LaunchConfig};

cuda_graph! {
    /// y = (x + x) / 2 + 1.
    graph Pipeline(x: &CudaSlice<f32>, y: &mut CudaSlice<f32>, n: u32) {
        sum: kernel kernels::Add<<<n.div_ceil(256), 256>>>(x, x, y, n);
        half: kernel kernels::Scale<<<n.div_ceil(256), 256>>>(y, 0.5f32, n);
        plus_one: kernel kernels::AddOne<<<n.div_ceil(256), 256>>>(y, n);
        sum -> half -> plus_one;
    }
}

fn main() -> common::Result {
    let Some(ctx) = common::device_or_dot(&[Pipeline::DOT])? else {
        return Ok(());
    };
    let (stream, checker) = (ctx.new_stream()?, ctx.new_stream()?);
    let n = 1u32 << 20;
    let config = LaunchConfig::for_elements(n, 256);
    let (iota, add, scale, add_one) = (
        kernels::Iota::load(&ctx)?,
        kernels::Add::load(&ctx)?,
        kernels::Scale::load(&ctx)?,
        kernels::AddOne::load(&ctx)?,
    );

    // A one-off initialisation on the stream: x = 0, 1, 2, ...
    let mut x = stream.alloc_zeros::<f32>(n as usize)?;
    let mut launch = iota.on(&stream);
    let xb = launch.bind_mut(&mut x);
    launch.launch(config, (xb, n))?;

    // The pipeline as a graph, into y.
    let mut y = stream.alloc_zeros::<f32>(n as usize)?;
    {
        let mut exec = Pipeline::build(&ctx, &x, &mut y, n)?.instantiate()?;
        exec.launch(&stream)?;
    }

    // The same pipeline as stream launches, into z.
    let mut z = stream.alloc_zeros::<f32>(n as usize)?;
    let mut launch = add.on(&stream);
    let (xa, xb, zb) = (launch.bind(&x), launch.bind(&x), launch.bind_mut(&mut z));
    launch.launch(config, (xa, xb, zb, n))?;
    let mut launch = scale.on(&stream);
    let zb = launch.bind_mut(&mut z);
    launch.launch(config, (zb, 0.5, n))?;
    let mut launch = add_one.on(&stream);
    let zb = launch.bind_mut(&mut z);
    launch.launch(config, (zb, n))?;

    // Validation on another stream: d = y - z. cudarc makes `checker` wait
    // for the graph's write of y and the launches' writes of z.
    let mut d = checker.alloc_zeros::<f32>(n as usize)?;
    let mut launch = scale.on(&checker);
    let zb = launch.bind_mut(&mut z);
    launch.launch(config, (zb, -1.0, n))?;
    let mut launch = add.on(&checker);
    let (yb, zb, db) = (launch.bind(&y), launch.bind(&z), launch.bind_mut(&mut d));
    launch.launch(config, (yb, zb, db, n))?;

    // A mistake is refused before anything is queued: a count past the end.
    let mut short = stream.alloc_zeros::<f32>(16)?;
    let mut launch = add_one.on(&stream);
    let sb = launch.bind_mut(&mut short);
    let refused = launch.launch(config, (sb, n)).unwrap_err();
    println!("refused as it should be: {refused}");

    let (y_h, d_h) = (stream.clone_dtoh(&y)?, checker.clone_dtoh(&d)?);
    common::ensure(
        y_h.iter().enumerate().all(|(i, v)| *v == i as f32 + 1.0),
        "the graph computed y = x + 1",
    )?;
    common::ensure(
        d_h.iter().all(|v| *v == 0.0),
        "the stream launches computed the same values (y - z = 0 on the checking stream)",
    )?;
    common::ensure(
        matches!(refused, graph_runtime::GraphError::LaunchRefused { .. }),
        "a count past a buffer's end was refused",
    )?;
    Ok(())
}
