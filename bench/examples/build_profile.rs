//! The macro's per-node build path without a GPU, for a profiler: builds
//! the benchmark's `Chains` graph (`width` x `length` AddOne kernels) over
//! a do-nothing driver (`scripts/build-profile` makes one and runs this
//! under callgrind). Prints nanoseconds per node over whichever driver it
//! loaded: over the do-nothing one they say nothing about a real driver
//! (the instruction counts are what to compare); the GPU bundle runs it
//! over the real one.
//!
//! `build_profile [WIDTH LENGTH REPS [instantiate]]` (default 16 100 200;
//! `instantiate`: each build is instantiated too, in `instantiate`)

use graph_bench::chains::build_chain;
use graph_runtime::cudarc::driver::{CudaContext, CudaSlice};
use std::sync::Arc;

/// One build and drop: what callgrind's `--toggle-collect` counts.
#[inline(never)]
fn build(ctx: &Arc<CudaContext>, xs: &mut [CudaSlice<f32>], length: usize, exec: bool) {
    let width = xs.len();
    let graph = build_chain(ctx, xs, width, length).expect("a build of the Chains graph");
    if exec {
        instantiate(&graph);
    }
    std::hint::black_box(&graph);
}

/// One instantiation and drop of the exec (`instantiate` mode): what
/// `--toggle-collect='build_profile::instantiate'` counts.
#[inline(never)]
fn instantiate(graph: &graph_runtime::Graph<'_>) {
    let exec = graph.instantiate().expect("an instantiation");
    std::hint::black_box(&exec);
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .take(3)
        .map(|a| a.parse().expect("WIDTH LENGTH REPS, numbers"))
        .collect();
    // Without arguments (as the GPU bundle runs every example): 16 x 100.
    let exec = std::env::args().nth(4).as_deref() == Some("instantiate");
    let [width, length, reps] = match args[..3.min(args.len())] {
        [] => [16, 100, 200],
        [w, l, r] => [w, l, r],
        _ => panic!("usage: build_profile [WIDTH LENGTH REPS [instantiate]]"),
    };
    let ctx = graph_runtime::driver::context(0).expect("a context of the do-nothing driver");
    let stream = ctx.default_stream();
    let mut xs: Vec<CudaSlice<f32>> = (0..width)
        .map(|_| stream.alloc_zeros::<f32>(32).expect("an allocation"))
        .collect();
    build(&ctx, &mut xs, length, exec);
    let start = std::time::Instant::now();
    for _ in 0..reps {
        build(&ctx, &mut xs, length, exec);
    }
    let per_node = start.elapsed().as_nanos() as f64 / (reps * width * length) as f64;
    let what = if exec {
        "build and instantiate"
    } else {
        "build"
    };
    println!("{width}x{length}: {per_node:.1} ns/node to {what} (and drop)");
}
