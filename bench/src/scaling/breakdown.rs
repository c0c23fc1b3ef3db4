//! Where a graph's build time goes, part by part.

use super::*;

/// Where build time goes (us, medians): graph creation, the kernel lookup,
/// one chain of 10 and of 100 nodes built through raw driver calls, the
/// runtime API and the macro, and the drop of the 10-node graph.
pub fn build_breakdown(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>) -> Result<String> {
    let mut bufs = vec![stream.alloc_zeros::<f32>(32)?];
    let kernel = kernels::AddOne::load(ctx)?;
    let sample = |reps: usize, f: &mut dyn FnMut() -> Result<f64>| -> Result<f64> {
        let samples = (0..reps).map(|_| f()).collect::<Result<Vec<f64>>>()?;
        Ok(median(samples))
    };
    let create = sample(51, &mut || {
        Ok(time_us(|| Ok(graph_runtime::Graph::new(ctx)?))?.0)
    })?;
    let lookup = sample(51, &mut || {
        Ok(time_us(|| Ok(kernels::AddOne::load(ctx)?))?.0)
    })?;
    // What a generated builder calls: the declaration's cached kernel,
    // borrowed.
    let borrowed = sample(51, &mut || {
        Ok(time_us(|| {
            Ok(std::hint::black_box(
                <kernels::AddOne as graph_runtime::kernel::KernelDef>::__loaded(ctx)?,
            ))
        })?
        .0)
    })?;
    // The timer's own cost, which every figure here includes once.
    let timer = sample(51, &mut || Ok(time_us(|| Ok(()))?.0))?;
    let mut out = format!(
        "build breakdown (us): Graph::new {create:.2}, kernel lookup {lookup:.2} (load) / {borrowed:.2} (builders), timer {timer:.3}"
    );
    // All three compiled as a user's release build.
    let function = kernel.function().cu_function();
    let ptr = device_ptr(&bufs[0], stream);
    for (length, reps) in [(10, 51), (100, 51)] {
        let runtime_api = sample(reps, &mut || {
            let (us, graph) = time_us(|| {
                Ok(crate::chains::runtime_api_chain(
                    ctx,
                    &mut bufs[0],
                    &kernel,
                    length,
                )?)
            })?;
            drop(graph);
            Ok(us)
        })?;
        let via_macro = sample(reps, &mut || {
            let (us, graph) =
                time_us(|| Ok(crate::chains::build_chain(ctx, &mut bufs, 1, length)?))?;
            drop(graph);
            Ok(us)
        })?;
        let raw = sample(reps, &mut || {
            Ok(time_us(|| raw_build(function, &[ptr], length, RawAdd::Generic))?.0)
        })?;
        let raw_kernel_call = sample(reps, &mut || {
            Ok(time_us(|| raw_build(function, &[ptr], length, RawAdd::KernelNode))?.0)
        })?;
        out.push_str(&format!(
            "; 1x{length}: raw {raw:.2}, raw cuGraphAddKernelNode {raw_kernel_call:.2}, runtime API {runtime_api:.2}, macro {via_macro:.2}"
        ));
    }
    // What single calls cost on this host, per call over 1,000 calls: the
    // context check the runtime makes per node, and an uncontended lock.
    let per_call = |f: &mut dyn FnMut() -> Result| -> Result<f64> {
        let us = sample(11, &mut || {
            Ok(time_us(|| {
                for _ in 0..1000 {
                    f()?;
                }
                Ok(())
            })?
            .0)
        })?;
        Ok(us / 1000.0)
    };
    let get_current = per_call(&mut || {
        let mut current = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local.
        unsafe { sys::cuCtxGetCurrent(&mut current) }.result()?;
        std::hint::black_box(current);
        Ok(())
    })?;
    let bind = per_call(&mut || Ok(ctx.bind_to_thread()?))?;
    let mutex = std::sync::Mutex::new(0u64);
    let locking = per_call(&mut || {
        *mutex.lock().map_err(|_| "poisoned")? += 1;
        Ok(())
    })?;
    out.push_str(&format!(
        "; per call: cuCtxGetCurrent {get_current:.3}, bind_to_thread {bind:.3}, uncontended Mutex {locking:.3}"
    ));
    let dropping = sample(51, &mut || {
        let graph = crate::chains::build_chain(ctx, &mut bufs, 1, 10)?;
        Ok(time_us(|| {
            drop(graph);
            Ok(())
        })?
        .0)
    })?;
    out.push_str(&format!("; drop of 1x10 {dropping:.2}"));
    // What a lane costs beyond its nodes: a bound slice (cudarc waits for
    // its pending work on its stream when handing out its address, with
    // more than one stream alive) and a repeated block's loop. 16 x 10
    // against 1 x 160: the same nodes, 15 more lanes.
    let mut lanes: Vec<CudaSlice<f32>> = (0..16)
        .map(|_| stream.alloc_zeros::<f32>(32))
        .collect::<std::result::Result<_, _>>()?;
    let binds = sample(51, &mut || {
        Ok(time_us(|| {
            let mut graph = graph_runtime::Graph::new(ctx)?;
            for slice in lanes.iter_mut() {
                std::hint::black_box(graph.bind_mut(slice));
            }
            Ok(graph)
        })?
        .0)
    })?;
    let mut chain = |width: usize, length: usize| {
        sample(51, &mut || {
            let xs = &mut lanes[..width];
            Ok(time_us(|| Ok(crate::chains::build_chain(ctx, xs, width, length)?))?.0)
        })
    };
    let (wide, long) = (chain(16, 10)?, chain(1, 160)?);
    out.push_str(&format!(
        "; bind_mut {:.3} a slice (multi-stream mode: {}); lanes: 16x10 macro {wide:.2}, 1x160 macro {long:.2}, {:.3} an extra lane\n",
        (binds - create) / 16.0,
        ctx.is_in_multi_stream_mode(),
        (wide - long) / 15.0,
    ));
    Ok(out)
}
