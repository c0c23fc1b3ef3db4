//! One node's arguments set through its typed accessor, without a GPU,
//! for a profiler: the bench's per-node update (`exec.step(0, 50)` of the
//! 1 x 100 `Chains` graph) over a do-nothing driver. `scripts/update-profile`
//! runs it under callgrind; over a real driver (the GPU bundle runs every
//! example) it prints nanoseconds per update.
//!
//! `update_profile [REPS]` (default 2000)

use graph_bench::chains::{Chains, ChainsExec};
use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::Buf;

/// `reps` updates of one node: what callgrind's `--toggle-collect` counts.
#[inline(never)]
fn update<'a>(exec: &mut ChainsExec<'a>, x0: Buf<'a, f32>, reps: usize) {
    for i in 0..reps {
        let n = if i % 2 == 0 { 16u32 } else { 32 };
        exec.step(0, 50).set_args((x0, n)).expect("an update");
    }
}

fn main() {
    let reps: usize = std::env::args()
        .nth(1)
        .map_or(2000, |r| r.parse().expect("REPS, a number"));
    let ctx = graph_runtime::driver::context(0).expect("a context");
    let stream = ctx.default_stream();
    let mut xs: [CudaSlice<f32>; 1] = [stream.alloc_zeros(32).expect("an allocation")];
    let graph = Chains::build(&ctx, &mut xs, 100).expect("a build of the Chains graph");
    let x0 = graph.bound().xs[0];
    let mut exec = graph.instantiate().expect("an instantiation");
    update(&mut exec, x0, 1);
    let start = std::time::Instant::now();
    update(&mut exec, x0, reps);
    let per_update = start.elapsed().as_nanos() as f64 / reps as f64;
    println!("one node's arguments: {per_update:.1} ns per update");
}
