//! Soak: 10,000 cycles (CUDA_GRAPH_SOAK_CYCLES) of build, instantiate,
//! launch, per-node update, whole-graph update and drop over every node
//! kind (see `load/workload.rs`), every launch checked. Device memory
//! (cuMemGetInfo and the graph-memory attributes, after a trim) and host
//! memory (RSS, and the live bytes of the Rust heap, counted by this test's
//! allocator) are printed every tenth of the run and must stay flat from
//! the first tenth (cycle 1,000) to the end. RSS also holds the driver's
//! own memory and the allocator's free lists; the Rust heap's count is
//! what a leak in graph-runtime or cudarc would grow.

#[path = "gpu_runtime/common.rs"]
#[allow(dead_code)]
mod common;
#[path = "load/workload.rs"]
mod workload;

use graph_runtime::memory::{graph_mem_usage, trim_graph_memory};
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicI64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// The system allocator, counting the bytes it has handed out and not had
/// back (every thread's: the workers', the runtime's, cudarc's).
struct Counting;

static LIVE: AtomicI64 = AtomicI64::new(0);

// SAFETY: every call goes to `System` with the caller's arguments
// unchanged; the counter is only arithmetic on the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as i64, Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as i64, Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size() as i64, Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc`, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_add(new_size as i64 - layout.size() as i64, Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const MIB: f64 = 1024.0 * 1024.0;

/// Printed past libtest's capture (which only takes `print!`), so the GPU
/// run's log keeps the figures.
fn say(line: String) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

#[derive(Debug, Clone, Copy)]
struct Sample {
    cycle: u64,
    device_used: u64,
    graph_used: u64,
    graph_reserved: u64,
    rss: u64,
    heap: i64,
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn soak_over_every_node_kind_keeps_memory_flat() {
    let ctx = common::gpu();
    let cycles: u64 = std::env::var("CUDA_GRAPH_SOAK_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let stream = ctx.new_stream().unwrap();
    let kernels = workload::Kernels::load(&ctx).unwrap();
    let mut data = workload::Data::new(&ctx, &stream).unwrap();
    let every = (cycles / 10).max(1);
    let mut samples = Vec::new();
    let start = Instant::now();
    for cycle in 0..cycles {
        if let Err(e) = workload::cycle(&ctx, &stream, &kernels, &mut data, cycle) {
            panic!("soak cycle {cycle}: {e}");
        }
        if (cycle + 1) % every == 0 {
            stream.synchronize().unwrap();
            trim_graph_memory(&ctx).unwrap();
            let (free, total) = ctx.mem_get_info().unwrap();
            let graph = graph_mem_usage(&ctx).unwrap();
            let sample = Sample {
                cycle: cycle + 1,
                device_used: (total - free) as u64,
                graph_used: graph.used_current,
                graph_reserved: graph.reserved_current,
                rss: workload::rss_bytes(),
                heap: LIVE.load(Relaxed),
            };
            say(format!(
                "soak: cycle {:>6}: device used {:>9.1} MiB, graph memory used {} B reserved {} B, host RSS {:>7.1} MiB, Rust heap {:>9.1} KiB ({:.2} ms/cycle)",
                sample.cycle,
                sample.device_used as f64 / MIB,
                sample.graph_used,
                sample.graph_reserved,
                sample.rss as f64 / MIB,
                sample.heap as f64 / 1024.0,
                start.elapsed().as_secs_f64() * 1e3 / (cycle + 1) as f64,
            ));
            samples.push(sample);
        }
    }
    let (first, last) = (samples[0], *samples.last().unwrap());
    let grew = |a: u64, b: u64| b.saturating_sub(a) as f64 / MIB;
    say(format!(
        "soak: {} cycles in {:.1} s; from cycle {} to {}: device used {:+.1} MiB, host RSS {:+.1} MiB, Rust heap {:+.1} KiB",
        cycles,
        start.elapsed().as_secs_f64(),
        first.cycle,
        last.cycle,
        (last.device_used as f64 - first.device_used as f64) / MIB,
        (last.rss as f64 - first.rss as f64) / MIB,
        (last.heap - first.heap) as f64 / 1024.0,
    ));
    for s in &samples {
        assert_eq!(s.graph_used, 0, "graph memory left in use: {s:?}");
        assert_eq!(
            s.graph_reserved, 0,
            "graph memory left reserved after a trim: {s:?}"
        );
    }
    assert!(
        grew(first.device_used, last.device_used) <= 4.0,
        "device memory grew: {first:?} -> {last:?}"
    );
    assert!(
        grew(first.rss, last.rss) <= 8.0,
        "host memory grew: {first:?} -> {last:?}"
    );
    // Under 32 bytes a cycle (a leaked node record would be more), with
    // 64 KiB for capacities that grow once (channels, caches).
    let measured = (last.cycle - first.cycle) as i64;
    assert!(
        last.heap - first.heap <= 32 * measured + 64 * 1024,
        "the Rust heap grew: {first:?} -> {last:?}"
    );
    // Every graph's and exec's reference to the kept value is released.
    let deadline = Instant::now() + Duration::from_secs(10);
    while workload::kept_holders(&data) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        workload::kept_holders(&data),
        0,
        "user objects not released"
    );
}
