//! A binary with cudarc's `dynamic-linking` (the loading mode candle uses):
//! libcuda and libnvrtc are linked, not loaded. Built by
//! `scripts/gpu-bundle` against link-time stubs (`scripts/cuda-stubs`) and
//! run by `.gpu/run.sh` on the GPU machine, where the real libraries are
//! loaded. A graph with a fill, an NVRTC-compiled kernel and a copy runs and
//! its result is checked; exit status 0 only if it is right.

use graph_runtime::kernel::{KernelDef, Len, Out};
use graph_runtime::{Graph, LaunchConfig};

const SOURCE: &str = r#"extern "C" __global__ void add_one(float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }"#;
graph_runtime::declare_kernel! {
    // SAFETY: `add_one` takes (float*, unsigned) and touches only x[0..n];
    // n is a `Len`, checked against x's length.
    AddOne: (Out<f32>, Len) = unsafe cuda_c(SOURCE, "add_one");
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    const N: u32 = 4096;
    let ctx = graph_runtime::driver::context(0)?;
    let stream = ctx.new_stream()?;
    let mut x = stream.clone_htod(&vec![5.0f32; N as usize])?;
    let mut y = stream.alloc_zeros::<f32>(N as usize)?;
    // The library's macro-built graph: x = 0, then y = x.
    downstream_check::run(&ctx, &stream, &mut x, &mut y)?;
    // Then a kernel node compiled by the linked NVRTC: y += 1, twice.
    let add_one = AddOne::load(&ctx)?;
    {
        let mut g = Graph::new(&ctx)?;
        let yb = g.bind_mut(&mut y);
        let config = LaunchConfig::for_elements(N, 256);
        let first = g.add_kernel("first", &add_one, config, (yb, N), &[])?;
        g.add_kernel("second", &add_one, config, (yb, N), &[first.node()])?;
        let mut exec = g.instantiate()?;
        exec.launch(&stream)?;
        exec.synchronize()?;
    }
    let (x_h, y_h) = (stream.clone_dtoh(&x)?, stream.clone_dtoh(&y)?);
    if x_h.iter().all(|v| *v == 0.0) && y_h.iter().all(|v| *v == 2.0) {
        println!("ok: a dynamically linked binary built, launched and checked two graphs");
        Ok(())
    } else {
        Err("wrong result: expected x = 0 and y = 2 everywhere".into())
    }
}
