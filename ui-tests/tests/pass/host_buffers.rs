// Host memory the graph owns: a copy brings device data into it, a host
// node sums it, another host node writes a host buffer a copy sends up;
// the exec hands both to the program between launches.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;
use std::sync::{Arc, Mutex};

cuda_graph! {
    graph SumOnHost(x: &mut CudaSlice<f32>, total: Arc<Mutex<f64>>, n: u32) {
        host seen: f32[n];
        host scale: f32[1];
        down: copy x => seen;
        sum: host move |seen: &[f32]| {
            *total.lock().unwrap() = seen.iter().map(|v| f64::from(*v)).sum();
        };
        pick: host |scale: &mut [f32]| scale[0] = 2.0;
        up: copy scale => x;
        down -> sum;
        [down, pick] -> up;
    }
}

fn main() {
    // Compiled, not run (no GPU here).
    let _ = run;
}

fn run() -> graph_runtime::Result<()> {
    let ctx = graph_runtime::driver::context(0)?;
    let stream = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(1).unwrap();
    let total = Arc::new(Mutex::new(0.0));
    let graph = SumOnHost::build(&ctx, &mut x, total.clone(), 1)?;
    let _handle: graph_runtime::HostBuf<f32> = graph.bound().seen;
    let mut exec = graph.instantiate()?;
    exec.launch(&stream)?;
    let seen: &mut [f32] = exec.seen()?;
    seen[0] = 1.0;
    exec.scale()?[0] = 3.0;
    Ok(())
}
