//! Updating an instantiated graph in a loop: per-node argument updates
//! through the typed node accessor, whole-graph updates from a rebuilt
//! graph, and a graph cache keyed by shape.

#[path = "common.rs"]
mod common;

use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::{cuda_graph, CacheOutcome, GraphCache, InstantiateOptions};
use std::time::Instant;

cuda_graph! {
    /// y = x + x, then y *= factor.
    graph Step(x: &CudaSlice<f32>, y: &mut CudaSlice<f32>, factor: f32, n: u32) {
        sum: kernel kernels::Add<<<n.div_ceil(256), 256>>>(x, x, y, n);
        scale: kernel kernels::Scale<<<n.div_ceil(256), 256>>>(y, factor, n);
        sum -> scale;
    }
}

fn main() -> common::Result {
    let Some(ctx) = common::device_or_dot(&[Step::DOT])? else {
        return Ok(());
    };
    let stream = ctx.new_stream()?;
    let n = 1u32 << 16;
    let x = stream.clone_htod(&vec![1.0f32; n as usize])?;
    let mut y = stream.alloc_zeros::<f32>(n as usize)?;
    let mut z = stream.alloc_zeros::<f32>(n as usize)?;
    let (per_node_us, whole_us);
    {
        let graph = Step::build(&ctx, &x, &mut y, 1.0, n)?;
        let mut exec = graph.instantiate()?;
        let bound = graph.bound();
        // Per-node update: a new factor for the `scale` node each iteration.
        let start = Instant::now();
        for i in 1..=10 {
            exec.scale().set_args((bound.y, i as f32, n))?;
            exec.launch(&stream)?;
        }
        stream.synchronize()?;
        per_node_us = start.elapsed().as_secs_f64() * 1e6 / 10.0;
        // Whole-graph update: rebuild with another factor over the same buffers.
        let start = Instant::now();
        for i in 1..=10 {
            let next = graph.rebuild(bound.x, bound.y, 0.5 * i as f32, n)?;
            exec.update(&next)?;
            exec.launch(&stream)?;
        }
        stream.synchronize()?;
        whole_us = start.elapsed().as_secs_f64() * 1e6 / 10.0;
    }
    // The last launch: y = (x + x) * 5.
    common::ensure(
        stream.clone_dtoh(&y)?.iter().all(|v| *v == 10.0),
        "after 10 per-node and 10 whole-graph updates",
    )?;
    println!("per-node update + launch: {per_node_us:.1} us; rebuild + whole-graph update + launch: {whole_us:.1} us");

    // A cache keyed by the graph's shape (here, its element count). The
    // buffers are bound once; each launch rebuilds over them.
    let mut outcomes = Vec::new();
    {
        let base = Step::build(&ctx, &x, &mut z, 0.0, n)?;
        let bound = base.bound();
        let mut cache = GraphCache::new(4);
        for (i, count) in [n, n, n / 2, n].into_iter().enumerate() {
            let outcome = cache.launch(count, &stream, &InstantiateOptions::default(), || {
                Ok(base
                    .rebuild(bound.x, bound.y, i as f32 + 1.0, count)?
                    .into_graph())
            });
            outcomes.push(outcome?);
        }
    }
    let kinds: Vec<&str> = outcomes
        .iter()
        .map(|o| match o {
            CacheOutcome::Miss => "miss",
            CacheOutcome::Hit => "hit",
            CacheOutcome::Reinstantiated => "reinstantiated",
            // The enum is non_exhaustive: later versions may add outcomes.
            _ => "other",
        })
        .collect();
    println!("graph cache: {kinds:?}");
    common::ensure(
        kinds == ["miss", "hit", "miss", "hit"],
        "the cache missed on new shapes and hit on known ones",
    )?;
    common::ensure(
        stream.clone_dtoh(&z)?.iter().all(|v| *v == 8.0),
        "the cached exec ran the last build (factor 4)",
    )
}
