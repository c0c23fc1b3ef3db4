//! User objects: Rust values whose life CUDA ties to the graphs and execs
//! that can use them. A host node's closure and a value kept with
//! `keep_alive` are dropped exactly once, on a CUDA thread, after the last
//! exec is gone and its work has finished.

#[path = "common.rs"]
mod common;

use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Counts its drops.
struct Probe(Arc<AtomicUsize>);

impl Drop for Probe {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

cuda_graph! {
    graph WithObjects(x: &mut CudaSlice<f32>, n: u32, calls: Arc<AtomicUsize>, probe: Probe) {
        work: kernel kernels::SlowFill<<<1, 32>>>(x, 5.0f32, n, 10_000_000i64);
        report: host move || {
            let _keep = &probe;
            calls.fetch_add(1, Ordering::SeqCst);
        };
        work -> report;
    }
}

fn main() -> common::Result {
    let Some(ctx) = common::device_or_dot(&[WithObjects::DOT])? else {
        return Ok(());
    };
    let stream = ctx.new_stream()?;
    let n = 1024u32;
    let mut x = stream.alloc_zeros::<f32>(n as usize)?;
    let (drops, calls) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    {
        let mut graph = WithObjects::build(&ctx, &mut x, n, calls.clone(), Probe(drops.clone()))?;
        graph.graph_mut().keep_alive(Probe(drops.clone()))?;
        let mut exec = graph.instantiate()?;
        exec.launch(&stream)?;
        exec.launch(&stream)?;
        drop(graph);
        common::ensure(
            drops.load(Ordering::SeqCst) == 0,
            "the exec still holds both objects",
        )?;
    }
    stream.synchronize()?;
    let start = Instant::now();
    while drops.load(Ordering::SeqCst) < 2 && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_micros(100));
    }
    println!(
        "destructors ran {:.2} ms after the synchronize returned",
        start.elapsed().as_secs_f64() * 1e3
    );
    std::thread::sleep(Duration::from_millis(50));
    common::ensure(
        drops.load(Ordering::SeqCst) == 2,
        "each object was dropped exactly once",
    )?;
    common::ensure(
        calls.load(Ordering::SeqCst) == 2,
        "the host node ran at both launches",
    )?;
    common::ensure(
        stream.clone_dtoh(&x)?.iter().all(|v| *v == 5.0),
        "the kernel's result",
    )
}
