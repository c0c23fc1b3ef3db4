//! Repeated blocks: chains, lanes of chains, fan-out and fan-in, alloc
//! scopes, conditionals and captures inside them, a block inside a
//! conditional body, and the typed accessors that take the iteration.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;

cuda_graph! {
    /// `width` lanes, each a chain of `length` steps on its part of `x`.
    pub graph Lanes(x: &mut CudaSlice<f32>, width: usize, length: u32) {
        init: fill x = 0.0f32;
        #[disjoint(x)]
        lanes: for w in 0..width {
            chain: for i in 0..length {
                step: kernel kernels::AddOne<<<1, 32>>>(x.slice(w * 32..(w + 1) * 32), 32u32);
                step[i-1] -> step;
            }
        }
        done: kernel kernels::Scale<<<1, 32>>>(x, 2.0f32, 32u32);
        init -> lanes -> done;
    }

    /// Names an operand binds itself (`let`, a closure's parameter) may be
    /// those of another block's loop variable: they are not that variable.
    pub graph LocalNames(x: &mut CudaSlice<f32>, width: usize) {
        #[disjoint(x)]
        lanes: for w in 0..width {
            step: kernel kernels::AddOne<<<1, 32>>>(x.slice(w * 32..(w + 1) * 32), 32u32);
        }
        first: fill { let w = 0usize; x.slice(w * 32..(w + 1) * 32) } = 0.0f32;
        second: fill (|w: usize| x.slice(w * 32..(w + 1) * 32))(1) = 0.0f32;
        lanes -> first -> second;
    }

    /// A scratch buffer per iteration, and a conditional per iteration.
    pub graph PerIteration(x: &mut CudaSlice<f32>, layers: u32) {
        layer: for l in 0..layers {
            cond go = 1;
            alloc scratch: f32[32] {
                fill_it: kernel kernels::Iota<<<1, 32>>>(scratch, 32u32);
                add: kernel kernels::Add<<<1, 32>>>(scratch, x, x, 32u32);
                fill_it -> add;
            }
            maybe: if go {
                again: kernel kernels::AddOne<<<1, 32>>>(x, 32u32);
            }
            scratch -> maybe;
            maybe[l-1] -> scratch;
        }
    }

    /// A repeated block in a `while` body.
    pub graph Sweeps(x: &mut CudaSlice<f32>, counter: &mut CudaSlice<i32>, sweeps: usize) {
        cond again = 1;
        outer: while again {
            inner: for s in 0..sweeps {
                sweep: kernel kernels::AddOne<<<1, 32>>>(x, 32u32);
                sweep[s-1] -> sweep;
            }
            stop: kernel kernels::CountdownStep<<<1, 1>>>(again, counter);
            inner -> stop;
        }
    }

    /// A fragment placed twice: a prologue and a WHILE body.
    pub graph Placed(x: &mut CudaSlice<f32>, counter: &mut CudaSlice<i32>, n: usize) {
        cond again = 1;
        fragment step {
            bump: kernel kernels::AddOne<<<1, 32>>>(x, 32u32);
            down: kernel kernels::CountdownStep<<<1, 1>>>(again, counter);
            bump -> down;
        }
        first: use step;
        rest: while again {
            body: use step;
        }
        more: for i in 0..n {
            each: use step2;
            each[i-1] -> each;
        }
        fragment step2 {
            a: kernel kernels::AddOne<<<1, 32>>>(x, 32u32);
        }
        first -> rest -> more;
    }

    /// The README's example: a list of buffers, one per tile.
    pub graph TileLayers(xs: &mut [CudaSlice<f32>], layers: usize) {
        #[disjoint(xs)]
        tile: for t in 0..xs.len() {
            layer: for l in 0..layers {
                half: kernel kernels::Scale<<<1, 256>>>(xs[t], 0.5f32, 256u32);
                plus: kernel kernels::AddOne<<<1, 256>>>(xs[t], 256u32);
                half -> plus;
                plus[l-1] -> half;
            }
        }
    }

    /// Regressions from the attack review: a label like a mangled fragment
    /// node (`p__b` beside `p.b`), a nested block as the source of an edge
    /// between iterations, an allocation in every iteration.
    pub graph Regressions(x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>, n: usize) {
        fragment f {
            b: fill x = 0.0f32;
        }
        p: use f;
        p__b: fill y = 1.0f32;
        c: kernel kernels::AddOne<<<1, 32>>>(x, 32u32);
        p -> c;
        outer: for o in 0..n {
            inner: for i in 0..n {
                z: kernel kernels::AddOne<<<1, 32>>>(y, 32u32);
                z[i-1] -> z;
            }
            inner[o-1] -> inner;
            t: alloc f32[32];
            u: fill t = 0.0f32;
            done: free t;
            t -> u -> done;
        }
        p__b -> outer;
    }

    /// A capture per iteration.
    pub graph Captured(stream: &Arc<CudaStream>, x: &mut CudaSlice<f32>, n: usize) {
        rounds: for r in 0..n {
            // SAFETY: the captured work touches no memory.
            lib: unsafe capture(stream) |s| { let _ = (s, r); Ok(()) };
            bump: kernel kernels::AddOne<<<1, 32>>>(x, 32u32);
            lib -> bump;
            bump[r-1] -> lib;
        }
    }
}

#[allow(dead_code)]
fn accessors(ctx: &Arc<graph_runtime::cudarc::driver::CudaContext>, x: &mut CudaSlice<f32>) -> graph_runtime::Result<()> {
    let graph = Lanes::build(ctx, x, 4, 10)?;
    let mut exec = graph.instantiate()?;
    exec.step(3, 9).set_enabled(false)?;
    let rebuilt = graph.rebuild(graph.bound().x, 4, 10)?;
    exec.update(&rebuilt)?;
    Ok(())
}

#[allow(dead_code)]
fn tiles(ctx: &Arc<graph_runtime::cudarc::driver::CudaContext>, tiles: &mut [CudaSlice<f32>]) -> graph_runtime::Result<()> {
    let graph = TileLayers::build(ctx, tiles, 12)?;
    let mut exec = graph.instantiate()?;
    exec.plus(3, 11).set_enabled(false)?;
    let bound = graph.bound();
    let again = graph.rebuild(&bound.xs, 6)?;
    exec.update(&again)?;
    Ok(())
}

#[allow(dead_code)]
fn expression(ctx: &Arc<graph_runtime::cudarc::driver::CudaContext>, mut x: CudaSlice<f32>, n: usize) -> graph_runtime::Result<usize> {
    let graph = cuda_graph! {
        graph(ctx) {
            first: fill &mut x = 1.0f32;
            twice: for i in 0..n {
                a: kernel kernels::AddOne<<<1, 32>>>(&mut x, 32u32);
                b: kernel kernels::Scale<<<1, 32>>>(&mut x, 2.0f32, 32u32);
                a -> b;
                b[i-1] -> a;
            }
            first -> twice;
        }
    }?;
    Ok(graph.node_count())
}

fn main() {}
