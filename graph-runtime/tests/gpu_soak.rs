//! Soak: 10,000 cycles (CUDA_GRAPH_SOAK_CYCLES) of build, instantiate,
//! launch, per-node update, whole-graph update and drop over every node
//! kind (see `load/workload.rs`), every launch checked. Device memory
//! (cuMemGetInfo and the graph-memory attributes, after a trim) and host
//! memory (RSS) are printed every tenth of the run and must stay flat from
//! the first tenth (cycle 1,000) to the end.

#[path = "gpu_runtime/common.rs"]
#[allow(dead_code)]
mod common;
#[path = "load/workload.rs"]
mod workload;

use graph_runtime::memory::{graph_mem_usage, trim_graph_memory};
use std::io::Write;
use std::time::{Duration, Instant};

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
}

#[test]
fn soak_over_every_node_kind_keeps_memory_flat() {
    let Some(ctx) = common::gpu() else { return };
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
            };
            say(format!(
                "soak: cycle {:>6}: device used {:>9.1} MiB, graph memory used {} B reserved {} B, host RSS {:>7.1} MiB ({:.2} ms/cycle)",
                sample.cycle,
                sample.device_used as f64 / MIB,
                sample.graph_used,
                sample.graph_reserved,
                sample.rss as f64 / MIB,
                start.elapsed().as_secs_f64() * 1e3 / (cycle + 1) as f64,
            ));
            samples.push(sample);
        }
    }
    let (first, last) = (samples[0], *samples.last().unwrap());
    let grew = |a: u64, b: u64| b.saturating_sub(a) as f64 / MIB;
    say(format!(
        "soak: {} cycles in {:.1} s; from cycle {} to {}: device used {:+.1} MiB, host RSS {:+.1} MiB",
        cycles,
        start.elapsed().as_secs_f64(),
        first.cycle,
        last.cycle,
        (last.device_used as f64 - first.device_used as f64) / MIB,
        (last.rss as f64 - first.rss as f64) / MIB,
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
