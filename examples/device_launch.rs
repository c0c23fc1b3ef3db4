//! Device graph launch: a kernel tail-launches another graph, and a graph
//! relaunches itself from the device 1,000 times.

#[path = "common.rs"]
mod common;

use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::DeviceExec;

cuda_graph! {
    /// Launched from the device.
    #[device_launch]
    graph Target(x: &mut CudaSlice<f32>, n: u32) {
        bump: kernel kernels::AddOne<<<n.div_ceil(256), 256>>>(x, n);
    }

    /// Tail-launches `target` when it completes.
    #[device_launch]
    graph Launcher(target: DeviceExec<'a>) {
        tail: kernel kernels::LaunchGraph<<<1, 1>>>(target, 0u32);
    }

    /// Relaunches itself while the counter is positive.
    #[device_launch]
    graph SelfLoop(counter: &mut CudaSlice<i32>, steps: &mut CudaSlice<i32>) {
        step: kernel kernels::RelaunchCountdown<<<1, 1>>>(counter, steps);
    }
}

fn main() -> common::Result {
    let Some(ctx) = common::device_or_dot(&[Target::DOT, Launcher::DOT, SelfLoop::DOT])? else {
        return Ok(());
    };
    let stream = ctx.new_stream()?;
    let n = 1024u32;
    let mut x = stream.alloc_zeros::<f32>(n as usize)?;
    {
        let target = Target::build(&ctx, &mut x, n)?;
        let mut target_exec = target.instantiate()?;
        target_exec.upload(&stream)?;
        let launcher = Launcher::build(&ctx, target_exec.device_handle()?)?;
        let mut exec = launcher.instantiate()?;
        exec.upload(&stream)?;
        for _ in 0..3 {
            exec.launch(&stream)?;
        }
        stream.synchronize()?;
    }
    common::ensure(
        stream.clone_dtoh(&x)?.iter().all(|v| *v == 3.0),
        "three tail launches from the device",
    )?;

    let mut counter = stream.clone_htod(&[1000i32])?;
    let mut steps = stream.alloc_zeros::<i32>(1)?;
    let elapsed;
    {
        let graph = SelfLoop::build(&ctx, &mut counter, &mut steps)?;
        let mut exec = graph.instantiate()?;
        exec.upload(&stream)?;
        stream.synchronize()?;
        let start = std::time::Instant::now();
        exec.launch(&stream)?;
        stream.synchronize()?;
        elapsed = start.elapsed();
    }
    let steps = stream.clone_dtoh(&steps)?[0];
    println!(
        "self-relaunch loop: {steps} steps, {:.2} us per step",
        elapsed.as_secs_f64() * 1e6 / f64::from(steps.max(1))
    );
    common::ensure(
        steps == 1000 && stream.clone_dtoh(&counter)?[0] == 0,
        "the self-relaunch loop ran 1,000 steps",
    )
}
