//! The Programming Guide's two-stage reduction, built two ways side by side:
//! explicit kernel nodes, and the same two launches captured from a stream
//! into a `capture` node. Both must give the host's sum.

#[path = "common.rs"]
mod common;

use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::{
    CudaSlice, CudaStream, LaunchConfig as CudarcConfig, PushKernelArg,
};
use graph_runtime::kernel::KernelDef;
use std::sync::Arc;
use std::time::Instant;

cuda_graph! {
    /// Explicit nodes: stage 1 writes one partial sum per block, stage 2 adds them.
    graph ReduceNodes(x: &CudaSlice<f32>, part: &mut CudaSlice<f64>, out: &mut CudaSlice<f64>,
                      n: u32, blocks: u32) {
        stage1: kernel kernels::ReducePartial<<<blocks, 256>>>(x, part, n);
        stage2: kernel kernels::ReduceFinal<<<1, 256>>>(part, out, blocks);
        stage1 -> stage2;
    }

    /// The same work captured from stream launches into one child node.
    graph ReduceCaptured(stream: &Arc<CudaStream>, x: &CudaSlice<f32>, part: &mut CudaSlice<f64>,
                         out: &mut CudaSlice<f64>, n: u32, blocks: u32) {
        // SAFETY: the captured launches touch only x, part and out, through
        // the capture's views of the graph's buffers.
        captured: unsafe capture(stream) |s| {
            let (stream, ctx) = (s.stream(), s.stream().context());
            let (partial, last) = (kernels::ReducePartial::load(ctx)?, kernels::ReduceFinal::load(ctx)?);
            let launch = |blocks: u32| CudarcConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
            let (x, mut part, mut out) = (s.read(x), s.write(part), s.write(out));
            // SAFETY: the arguments (device pointers and counts) match the
            // kernels' parameters; `part` has one element per block.
            unsafe {
                stream.launch_builder(partial.function()).arg(&x).arg(&mut part).arg(&n).launch(launch(blocks))
                    .map_err(|e| graph_runtime::capture::captured("launch reduce_partial", e))?;
                stream.launch_builder(last.function()).arg(&part).arg(&mut out).arg(&blocks).launch(launch(1))
                    .map_err(|e| graph_runtime::capture::captured("launch reduce_final", e))?;
            }
            Ok(())
        };
    }
}

fn main() -> common::Result {
    let Some(ctx) = common::device_or_dot(&[ReduceNodes::DOT, ReduceCaptured::DOT])? else {
        return Ok(());
    };
    let stream = ctx.new_stream()?;
    let (n, blocks) = (1u32 << 22, 264u32);
    let x_h: Vec<f32> = (0..n).map(|i| ((i * 7) % 13) as f32 * 0.5).collect();
    let expected: f64 = x_h.iter().map(|v| f64::from(*v)).sum();
    let x = stream.clone_htod(&x_h)?;
    let (mut part1, mut out1) = (
        stream.alloc_zeros::<f64>(blocks as usize)?,
        stream.alloc_zeros::<f64>(1)?,
    );
    let (mut part2, mut out2) = (
        stream.alloc_zeros::<f64>(blocks as usize)?,
        stream.alloc_zeros::<f64>(1)?,
    );
    let time = |exec: &mut dyn FnMut() -> graph_runtime::Result<()>| -> common::Result<f64> {
        exec()?; // warm up
        let mut samples = Vec::new();
        for _ in 0..21 {
            let start = Instant::now();
            exec()?;
            stream.synchronize()?;
            samples.push(start.elapsed().as_secs_f64() * 1e6);
        }
        samples.sort_by(f64::total_cmp);
        Ok(samples[samples.len() / 2])
    };
    let (nodes_us, captured_us);
    {
        let nodes = ReduceNodes::build(&ctx, &x, &mut part1, &mut out1, n, blocks)?;
        let mut exec = nodes.instantiate()?;
        nodes_us = time(&mut || exec.launch(&stream))?;
    }
    {
        let captured = ReduceCaptured::build(&ctx, &stream, &x, &mut part2, &mut out2, n, blocks)?;
        let mut exec = captured.instantiate()?;
        captured_us = time(&mut || exec.launch(&stream))?;
    }
    let (sum1, sum2) = (stream.clone_dtoh(&out1)?[0], stream.clone_dtoh(&out2)?[0]);
    println!("sum of {n} elements: nodes {sum1}, captured {sum2}, host {expected}");
    println!("median launch+sync: nodes {nodes_us:.1} us, captured {captured_us:.1} us");
    let close = |s: f64| (s - expected).abs() <= 1e-9 * expected.abs().max(1.0);
    common::ensure(close(sum1), "explicit-node reduction matches the host")?;
    common::ensure(close(sum2), "captured reduction matches the host")
}
