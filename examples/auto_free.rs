//! Auto-free on launch: a producer writes a graph allocation that nothing
//! frees; three consumers copy it out. With `#[auto_free_on_launch]` the
//! exec frees it at the next launch, so it can be relaunched.

#[path = "common.rs"]
mod common;

use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    #[auto_free_on_launch]
    graph Produce(first: &mut CudaSlice<f32>, second: &mut CudaSlice<f32>, third: &mut CudaSlice<f32>,
                  factor: f32, n: u32) {
        data: alloc f32[n];
        produce: kernel kernels::Iota<<<n.div_ceil(256), 256>>>(data, n);
        scale: kernel kernels::Scale<<<n.div_ceil(256), 256>>>(data, factor, n);
        to_first: copy data => first;
        to_second: copy data => second;
        to_third: copy data => third;
        data -> produce -> scale -> [to_first, to_second, to_third];
    }
}

fn main() -> common::Result {
    let Some(ctx) = common::device_or_dot(&[Produce::DOT])? else {
        return Ok(());
    };
    let stream = ctx.new_stream()?;
    let n = 4096u32;
    let mut outs: Vec<_> = (0..3)
        .map(|_| stream.alloc_zeros::<f32>(n as usize))
        .collect::<Result<_, _>>()?;
    {
        let [a, b, c] = &mut outs[..] else {
            unreachable!("three outputs")
        };
        let graph = Produce::build(&ctx, a, b, c, 3.0, n)?;
        let mut exec = graph.instantiate()?;
        for _ in 0..5 {
            exec.launch(&stream)?;
        }
    }
    for (i, out) in outs.iter().enumerate() {
        let got = stream.clone_dtoh(out)?;
        common::ensure(
            got.iter().enumerate().all(|(j, v)| *v == 3.0 * j as f32),
            format!("consumer {i} after 5 launches"),
        )?;
    }
    Ok(())
}
