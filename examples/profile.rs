//! Where the time goes, as a picture: a profiling launch of a DSL graph
//! (two branches, a WHILE loop on one of them, a join) reports each node's
//! start, end and duration by label, the critical path, and an SVG
//! timeline with one row per lane of concurrent work (`examples/profile.svg`
//! is one from an H200). The picture is written to the path given as the
//! first argument, else to `$OUT/profile.svg` when `OUT` is set, else to
//! `profile.svg`.

#[path = "common.rs"]
mod common;

use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    /// `x = seed`, then `y = 2 * 1.5^3` (a slow fill and a three-step loop)
    /// beside a slower `z = 3`, joined into `x = y + z`.
    graph Pipeline(x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>, z: &mut CudaSlice<f32>,
                   w: &mut CudaSlice<f32>, counter: &mut CudaSlice<i32>,
                   iterations: &mut CudaSlice<i32>, n: u32, spin: i64) {
        cond again = 1;
        reset: fill counter = 3i32;
        seed:  kernel kernels::Iota<<<n.div_ceil(256), 256>>>(x, n);
        left:  kernel kernels::SlowFill<<<n.div_ceil(256), 256>>>(y, 2.0f32, n, spin);
        right: kernel kernels::SlowFill<<<n.div_ceil(256), 256>>>(z, 3.0f32, n, 3 * spin);
        refine: while again {
            slow: kernel kernels::SlowFill<<<n.div_ceil(256), 256>>>(w, 4.0f32, n, spin);
            grow: kernel kernels::Scale<<<n.div_ceil(256), 256>>>(y, 1.5f32, n);
            step: kernel kernels::Countdown<<<1, 1>>>(again, counter, iterations);
            slow -> grow -> step;
        }
        combine: kernel kernels::Add<<<n.div_ceil(256), 256>>>(y, z, x, n);
        seed -> [left, right];
        [left, reset] -> refine;
        [refine, right] -> combine;
    }
}

fn main() -> common::Result {
    let Some(ctx) = common::device_or_dot(&[Pipeline::DOT])? else {
        return Ok(());
    };
    let stream = ctx.new_stream()?;
    let (n, spin) = (1u32 << 16, 300_000i64);
    let zeros = || stream.alloc_zeros::<f32>(n as usize);
    let (mut x, mut y, mut z, mut w) = (zeros()?, zeros()?, zeros()?, zeros()?);
    let (mut counter, mut iterations) =
        (stream.alloc_zeros::<i32>(1)?, stream.alloc_zeros::<i32>(1)?);
    let expected = 2.0 * 1.5f32.powi(3) + 3.0;
    let profile;
    {
        let mut graph = Pipeline::build(
            &ctx,
            &mut x,
            &mut y,
            &mut z,
            &mut w,
            &mut counter,
            &mut iterations,
            n,
            spin,
        )?;
        // A plain launch first: module loading stays out of the figures.
        let mut exec = graph.instantiate()?;
        exec.launch(&stream)?;
        exec.synchronize()?;
        drop(exec);
        profile = graph.graph_mut().profile(&stream)?;
    }
    println!("{profile}");
    let path = match (std::env::args().nth(1), std::env::var_os("OUT")) {
        (Some(path), _) => std::path::PathBuf::from(path),
        (None, Some(out)) => std::path::Path::new(&out).join("profile.svg"),
        (None, None) => "profile.svg".into(),
    };
    std::fs::write(&path, profile.svg())?;
    println!("timeline: {}", path.display());

    let x_h = stream.clone_dtoh(&x)?;
    common::ensure(
        x_h.iter().all(|v| *v == expected),
        format_args!("x = y + z = {expected} after the profiling launch"),
    )?;
    common::ensure(
        stream.clone_dtoh(&iterations)? == [6],
        "the loop ran three times per launch",
    )?;
    common::ensure(
        profile.nodes().len() == Pipeline::LABELS.len() - 3,
        "one timed node per top-level node (the loop's body counts as the loop)",
    )?;
    // Under a sanitizer the times say nothing about the program.
    if std::env::var_os("CUDA_GRAPH_SANITIZE").is_some() {
        println!("under compute-sanitizer: the times are not checked");
        return Ok(());
    }
    let path: Vec<&str> = profile
        .critical_path()
        .iter()
        .map(|&i| profile.nodes()[i].label.as_str())
        .collect();
    common::ensure(
        path == ["seed", "left", "refine", "combine"],
        format_args!("critical path {path:?} runs through the loop"),
    )?;
    let (sum, device) = (profile.critical_path_ms(), profile.device_ms());
    common::ensure(
        (sum - device).abs() <= 0.1 * device,
        format_args!(
            "the critical path ({sum:.3} ms) is within 10% of the device time ({device:.3} ms)"
        ),
    )
}
