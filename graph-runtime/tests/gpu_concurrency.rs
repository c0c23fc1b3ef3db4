//! Concurrency under load: CUDA_GRAPH_STRESS_THREADS threads (default 8),
//! each with its own stream, run cycles over every node kind
//! (`load/workload.rs`: build, instantiate, launch, update, drop, every
//! launch checked) for CUDA_GRAPH_STRESS_SECS seconds (default 30), against
//! one thread alone; then the sharing
//! patterns the API allows across threads: an exec moved to another
//! thread and back, and a graph cache used from several threads.

#[path = "gpu_runtime/common.rs"]
#[allow(dead_code)]
mod common;
#[path = "load/workload.rs"]
#[allow(dead_code)]
mod workload;

use graph_runtime::cudarc::driver::CudaContext;
use graph_runtime::kernel::KernelDef;
use graph_runtime::{Graph, GraphCache, InstantiateOptions, LaunchConfig, Result};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Threads of `an_exec_moves_between_threads`.
const THREADS: usize = 8;
/// Launches in one cycle (main graph 2, update pair 2, device launch 1).
const LAUNCHES_PER_CYCLE: u64 = 5;

fn say(line: String) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Runs cycles on a stream of its own until `time` is up; returns how many.
fn worker(ctx: &Arc<CudaContext>, kernels: &workload::Kernels, time: Duration) -> Result<u64> {
    let stream = ctx
        .new_stream()
        .map_err(|e| graph_runtime::capture::captured("new_stream", e))?;
    let mut data = workload::Data::new(ctx, &stream)?;
    let start = Instant::now();
    let mut cycles = 0;
    while start.elapsed() < time {
        workload::cycle(ctx, &stream, kernels, &mut data, cycles)?;
        cycles += 1;
    }
    Ok(cycles)
}

/// A positive number from the environment, or `default`.
fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|v| *v > 0)
        .unwrap_or(default)
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn threads_build_launch_update_and_drop_every_node_kind() {
    let ctx = common::gpu();
    let time = Duration::from_secs(setting("CUDA_GRAPH_STRESS_SECS", 30));
    let threads = setting("CUDA_GRAPH_STRESS_THREADS", 8) as usize;
    // Captures (one per cycle) make a context-wide synchronize fail on the
    // other threads, and cudarc makes one when the context's stream count
    // goes from zero to one: a stream kept for the test prevents that.
    let _kept = ctx.new_stream().unwrap();
    let kernels = workload::Kernels::load(&ctx).unwrap();
    let solo_time = (time / 6).max(Duration::from_secs(1));
    let solo = worker(&ctx, &kernels, solo_time).unwrap_or_else(|e| panic!("one thread: {e}"));
    let solo_rate = (solo * LAUNCHES_PER_CYCLE) as f64 / solo_time.as_secs_f64();
    let counts: Vec<u64> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| scope.spawn(|| worker(&ctx, &kernels, time)))
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(i, h)| {
                h.join()
                    .unwrap_or_else(|_| panic!("thread {i} panicked"))
                    .unwrap_or_else(|e| panic!("thread {i}: {e}"))
            })
            .collect()
    });
    let rates: Vec<f64> = counts
        .iter()
        .map(|c| (c * LAUNCHES_PER_CYCLE) as f64 / time.as_secs_f64())
        .collect();
    let total: f64 = rates.iter().sum();
    say(format!(
        "concurrency: one thread alone: {solo} cycles in {:.0} s, {solo_rate:.0} launches/s",
        solo_time.as_secs_f64()
    ));
    say(format!(
        "concurrency: {threads} threads for {} s: cycles per thread {counts:?}; launches/s per thread {:.0}..{:.0} ({:.2}..{:.2}x of one thread alone), all threads {total:.0}/s ({:.2}x)",
        time.as_secs(),
        rates.iter().cloned().fold(f64::INFINITY, f64::min),
        rates.iter().cloned().fold(0.0, f64::max),
        rates.iter().cloned().fold(f64::INFINITY, f64::min) / solo_rate,
        rates.iter().cloned().fold(0.0, f64::max) / solo_rate,
        total / solo_rate,
    ));
    assert!(
        counts.iter().all(|c| *c > 0),
        "a thread made no progress: {counts:?}"
    );
}

const N: u32 = 4096;

/// An exec built on one thread is launched on another (with that thread's
/// stream) and comes back; each launch adds one.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn an_exec_moves_between_threads() {
    let ctx = common::gpu();
    let stream = ctx.new_stream().unwrap();
    let add_one = kernels::AddOne::load(&ctx).unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        g.add_kernel(
            "bump",
            &add_one,
            LaunchConfig::for_elements(N, 256),
            (xb, N),
            &[],
        )
        .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        for _ in 0..THREADS {
            exec = std::thread::scope(|scope| {
                scope
                    .spawn(|| {
                        let theirs = ctx.new_stream().unwrap();
                        exec.launch(&theirs).unwrap();
                        exec.launch(&theirs).unwrap();
                        exec
                    })
                    .join()
                    .unwrap()
            });
        }
        exec.launch(&stream).unwrap();
    }
    let x = stream.clone_dtoh(&x).unwrap();
    let expected = (2 + 2 * THREADS) as f32;
    assert!(x.iter().all(|v| *v == expected), "{:?}", &x[..4]);
}

/// One graph cache behind a mutex, used by four threads with their own
/// streams: every launch updates (or builds) an exec over one shared
/// buffer, so the buffer counts every launch of every thread.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_graph_cache_is_shared_by_threads() {
    let ctx = common::gpu();
    let stream = ctx.new_stream().unwrap();
    let add_one = kernels::AddOne::load(&ctx).unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    const PER_THREAD: usize = 200;
    {
        let mut template = Graph::new(&ctx).unwrap();
        let xb = template.bind_mut(&mut x);
        let template = Mutex::new(template);
        let cache = Mutex::new(GraphCache::new(2));
        std::thread::scope(|scope| {
            for t in 0..4usize {
                let (template, cache, add_one, ctx) = (&template, &cache, &add_one, &ctx);
                scope.spawn(move || {
                    let stream = ctx.new_stream().unwrap();
                    for i in 0..PER_THREAD {
                        let key = (t + i) % 3;
                        let config = LaunchConfig::for_elements(N, 128 << (key % 2));
                        cache
                            .lock()
                            .unwrap()
                            .launch(key, &stream, &InstantiateOptions::default(), || {
                                let mut g = template.lock().unwrap().new_sharing()?;
                                g.add_kernel("bump", add_one, config, (xb, N), &[])?;
                                Ok(g)
                            })
                            .unwrap();
                    }
                });
            }
        });
        let (hits, misses) = cache.lock().unwrap().stats();
        assert_eq!(hits + misses, 4 * PER_THREAD as u64);
    }
    let x = stream.clone_dtoh(&x).unwrap();
    assert!(
        x.iter().all(|v| *v == (4 * PER_THREAD) as f32),
        "{:?}",
        &x[..4]
    );
}
