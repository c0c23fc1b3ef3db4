//! Programmatic dependent launch: a pipeline of kernels whose independent
//! prologues overlap the kernel before them. The same four steps are joined
//! once by ordinary edges and once by launch-order edges (one attribute on
//! the chain); the results are bit-identical and the PDL graph is faster.
//! Each kernel is declared PDL-aware (`unsafe pdl_aware cuda_c(..)`): it
//! calls `pdl_wait()` before touching what its predecessor wrote. An edge
//! into a kernel not declared so is a compile error at the edge.

#[path = "common.rs"]
mod common;

use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    /// Four prologue-heavy steps, ordinary edges.
    graph Ordinary(x: &mut CudaSlice<f32>, blocks: u32, n: u32, work: u32) {
        s0: kernel kernels::PdlPrologueStep<<<blocks, 256>>>(x, n, work);
        s1: kernel kernels::PdlPrologueStep<<<blocks, 256>>>(x, n, work);
        s2: kernel kernels::PdlPrologueStep<<<blocks, 256>>>(x, n, work);
        s3: kernel kernels::PdlPrologueStep<<<blocks, 256>>>(x, n, work);
        s0 -> s1 -> s2 -> s3;
    }

    /// The same steps; each may launch as soon as the previous one has.
    graph Overlapped(x: &mut CudaSlice<f32>, blocks: u32, n: u32, work: u32) {
        s0: kernel kernels::PdlPrologueStep<<<blocks, 256>>>(x, n, work);
        s1: kernel kernels::PdlPrologueStep<<<blocks, 256>>>(x, n, work);
        s2: kernel kernels::PdlPrologueStep<<<blocks, 256>>>(x, n, work);
        s3: kernel kernels::PdlPrologueStep<<<blocks, 256>>>(x, n, work);
        #[launch_order]
        s0 -> s1 -> s2 -> s3;
    }
}

fn main() -> common::Result {
    let Some(ctx) = common::device_or_dot(&[Ordinary::DOT, Overlapped::DOT])? else {
        return Ok(());
    };
    let stream = ctx.new_stream()?;
    let blocks = ctx.attribute(
        graph_runtime::cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
    )? as u32;
    let (n, work, launches) = (blocks * 256, 2048u32, 50);
    let x0: Vec<f32> = (0..n).map(|i| (i % 101) as f32).collect();
    let mut plain = stream.clone_htod(&x0)?;
    let mut pdl = stream.clone_htod(&x0)?;
    let start = ctx.new_event(Some(
        graph_runtime::cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT,
    ))?;
    let end = ctx.new_event(Some(
        graph_runtime::cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT,
    ))?;
    let mut per_step = [0.0f32; 2];
    {
        let ordinary = Ordinary::build(&ctx, &mut plain, blocks, n, work)?;
        let overlapped = Overlapped::build(&ctx, &mut pdl, blocks, n, work)?;
        let (mut ordinary, mut overlapped) = (ordinary.instantiate()?, overlapped.instantiate()?);
        let execs: [&mut graph_runtime::Exec<'_>; 2] = [ordinary.exec(), overlapped.exec()];
        for (exec, us) in execs.into_iter().zip(&mut per_step) {
            exec.launch(&stream)?; // warm-up
            start.record(&stream)?;
            for _ in 1..launches {
                exec.launch(&stream)?;
            }
            end.record(&stream)?;
            stream.synchronize()?;
            *us = start.elapsed_ms(&end)? * 1e3 / ((launches - 1) * 4) as f32;
        }
    }
    let plain = stream.clone_dtoh(&plain)?;
    let pdl = stream.clone_dtoh(&pdl)?;
    common::ensure(
        plain
            .iter()
            .zip(&pdl)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "launch-order edges give bit-identical results to ordinary edges",
    )?;
    // The host computes the same fused multiply-adds.
    let expected = |i: usize| {
        let prologue = kernels::pdl_prologue(i as u32, work);
        (0..launches * 4).fold(x0[i], |v, _| v.mul_add(0.5, prologue))
    };
    common::ensure(
        (0..n as usize)
            .step_by(101)
            .all(|i| pdl[i].to_bits() == expected(i).to_bits()),
        "the results match the host's",
    )?;
    println!(
        "per step: ordinary edges {:.2} us, launch-order edges {:.2} us ({:.2}x)",
        per_step[0],
        per_step[1],
        per_step[0] / per_step[1]
    );
    Ok(())
}
