//! The Programming Guide's graph-memory example: kernels a..e share one
//! graph allocation between its alloc and free nodes. In the Guide's first
//! version, d runs after the free and e is not ordered after the alloc:
//! `cuda_graph!` rejects both at compile time (see ui-tests
//! memory_graph_d_after_free and memory_graph_e_unordered). This is the
//! corrected graph, relaunched 100 times.

#[path = "common.rs"]
mod common;

use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph GuideMemory(ones: &CudaSlice<f32>, b_out: &mut CudaSlice<f32>, c_out: &mut CudaSlice<f32>,
                      d_out: &mut CudaSlice<f32>, e_out: &mut CudaSlice<f32>, n: u32) {
        buf: alloc f32[n];
        a: kernel kernels::Iota<<<n.div_ceil(256), 256>>>(buf, n);
        b: kernel kernels::Add<<<n.div_ceil(256), 256>>>(buf, buf, b_out, n);
        c: kernel kernels::Add<<<n.div_ceil(256), 256>>>(buf, ones, c_out, n);
        d: copy buf => d_out;
        e: kernel kernels::Add<<<n.div_ceil(256), 256>>>(ones, buf, e_out, n);
        done: free buf;
        buf -> a -> [b, c, d, e] -> done;
    }
}

fn main() -> common::Result {
    let Some(ctx) = common::device_or_dot(&[GuideMemory::DOT])? else {
        return Ok(());
    };
    let stream = ctx.new_stream()?;
    let n = 1u32 << 16;
    let ones = stream.clone_htod(&vec![1.0f32; n as usize])?;
    let mut outs: Vec<_> = (0..4)
        .map(|_| stream.alloc_zeros::<f32>(n as usize))
        .collect::<Result<_, _>>()?;
    {
        let [b, c, d, e] = &mut outs[..] else {
            unreachable!("four outputs")
        };
        let graph = GuideMemory::build(&ctx, &ones, b, c, d, e, n)?;
        let mut exec = graph.instantiate()?;
        for _ in 0..100 {
            exec.launch(&stream)?;
        }
    }
    let usage = graph_runtime::memory::graph_mem_usage(&ctx)?;
    println!(
        "graph memory: {} KiB reserved (allocation {} KiB)",
        usage.reserved_current / 1024,
        n * 4 / 1024
    );
    let read = |i: usize| stream.clone_dtoh(&outs[i]);
    let (b, c, d, e) = (read(0)?, read(1)?, read(2)?, read(3)?);
    let ok = (0..n as usize).all(|i| {
        let v = i as f32;
        b[i] == 2.0 * v && c[i] == v + 1.0 && d[i] == v && e[i] == v + 1.0
    });
    common::ensure(
        ok,
        "kernels a..e saw the allocation between its alloc and free nodes, 100 launches",
    )
}
