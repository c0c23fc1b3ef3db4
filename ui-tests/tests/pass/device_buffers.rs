// Device memory the graph owns: kernels and copies use it as a buffer bound
// `&mut`, in a conditional body and a repeated block too; the exec lends it
// out between launches, and a rebuild keeps it.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Owned(x: &mut CudaSlice<f32>, counter: &mut CudaSlice<i32>, n: u32, lanes: usize) {
        buffer acc: f32[n];
        buffer steps: f32[n];
        clear: fill acc = 0.0f32;
        cond again = 1;
        loop_: while again {
            step: kernel kernels::CountdownStep<<<1, 1>>>(again, counter);
            bump: kernel kernels::AddOne<<<n.div_ceil(256), 256>>>(steps, n);
            step -> bump;
        }
        #[disjoint(acc)]
        tile: for i in 0..lanes {
            part: kernel kernels::AddOne<<<1, 1>>>(acc.slice(i..i + 1), 1u32);
        }
        out: copy acc => x;
        clear -> loop_ -> tile -> out;
    }
}

fn main() {
    // Compiled, not run (no GPU here).
    let _ = run;
}

fn run() -> graph_runtime::Result<()> {
    let ctx = graph_runtime::driver::context(0)?;
    let stream = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(4).unwrap();
    let mut counter = stream.alloc_zeros::<i32>(1).unwrap();
    let graph = Owned::build(&ctx, &mut x, &mut counter, 4, 4)?;
    let acc: graph_runtime::Buf<'_, f32> = graph.bound().acc;
    let mut exec = graph.instantiate()?;
    exec.launch(&stream)?;
    let _values: Vec<f32> = exec.acc()?.to_host()?;
    exec.steps()?.write(&[1.0f32; 4])?;
    let bound = graph.bound();
    let again = graph.rebuild(bound.x, bound.counter, 4, 4)?;
    assert_eq!(again.bound().acc.device_ptr(), acc.device_ptr());
    exec.update(&again)?;
    Ok(())
}
