// A graph with one mistake reports that mistake only: the types, methods
// and accessors its callers use still exist (with bodies never reached),
// so their uses add no "no method named ..." errors.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::{CudaContext, CudaSlice};
use std::sync::Arc;

cuda_graph! {
    graph Lanes(x: &mut CudaSlice<f32>, n: usize) {
        #[disjoint(x)]
        lanes: for w in 0..n {
            step: kernel kernels::AddOne<<<1, 32>>>(x.slice(w * 32..(w + 1) * 32), 32u32);
        }
        done: fill x = 0.0f32;
        lanes -> dnoe;
    }
}

fn run(ctx: &Arc<CudaContext>, x: &mut CudaSlice<f32>) -> graph_runtime::Result<()> {
    let graph = Lanes::build(ctx, x, 4)?;
    let mut exec = graph.instantiate()?;
    exec.step(3).set_enabled(false)?;
    exec.done().set_enabled(false)?;
    let again = graph.rebuild(graph.bound().x, 2)?;
    exec.update(&again)?;
    exec.synchronize()
}

fn main() {
    let _ = run;
}
