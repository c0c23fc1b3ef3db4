//! NVIDIA's cudaGraphsPerfScaling shape: `width` parallel chains of `length`
//! tiny kernels (1 block x 32 threads, x[i] += 1), built and run four ways:
//! through `cuda_graph!`, through raw driver calls, in C++, and on streams.

use crate::cpp::CppLib;
use crate::timing::{median, paired_median, time_us, DeviceTimer, Result};
use graph_runtime::cudarc::driver::{sys, CudaContext, CudaSlice, CudaStream};
use graph_runtime::kernel::KernelDef;
use std::ffi::c_void;
use std::sync::Arc;

mod ab;
mod breakdown;
mod raw;

pub use ab::{build_ab, AB_VARIANTS};

pub(crate) use raw::device_ptr;
pub use raw::RawChain;
use raw::{raw_build, raw_build_once, raw_instantiate, RawAdd, RawExec};

pub use breakdown::build_breakdown;

/// One variant's numbers for one shape, in microseconds for the whole graph.
#[derive(Debug, Clone, Copy, Default)]
pub struct Row {
    pub build: f64,
    pub instantiate: f64,
    pub upload: f64,
    pub first_launch: f64,
    pub launch: f64,
    pub device: f64,
}

impl Row {
    /// Nothing measured yet (or not by this measurement).
    pub const UNMEASURED: Row = Row {
        build: f64::NAN,
        instantiate: f64::NAN,
        upload: f64::NAN,
        first_launch: f64::NAN,
        launch: f64::NAN,
        device: f64::NAN,
    };
}

pub const BUILD_REPS: usize = 11;

/// Rounds of interleaved builds per shape (see [`interleaved_builds`]).
pub const BUILD_ROUNDS: usize = 31;

/// Zeroes the chains' buffers (every variant runs on the same buffers, so
/// that where they lie in memory is the same for all).
pub fn zero(stream: &Arc<CudaStream>, bufs: &mut [CudaSlice<f32>]) -> Result {
    for buf in bufs.iter_mut() {
        stream.memset_zeros(buf)?;
    }
    Ok(stream.synchronize()?)
}

/// Launches of a measured exec before the timed ones: the first launch and
/// 3 warm-ups.
pub const LAUNCHES_BEFORE_TIMING: usize = 4;

/// Execs instantiated per measured graph. Identical execs of one graph
/// launch up to 7% apart (where the driver places each one), so launch and
/// device times are the median over several, kept alive side by side.
pub const EXECS: usize = 9;

/// Launches a measured graph sees in all (see [`measure`]).
pub fn launches_per_measure(reps: usize) -> usize {
    EXECS * (LAUNCHES_BEFORE_TIMING + reps)
}

/// Builds (median of `BUILD_REPS`) and instantiates the graph `build` makes
/// over `target`; then, for each of [`EXECS`] execs of it, uploads, launches
/// once and times `reps` launches after 3 warm-ups. Upload and first launch
/// are the first exec's; launch and device times the median over the execs
/// of each one's median. `target` sees `launches_per_measure(reps)` runs.
pub fn measure<T: ?Sized>(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    target: &mut T,
    reps: usize,
    build: impl for<'b> Fn(&'b mut T) -> graph_runtime::Result<graph_runtime::Graph<'b>>,
) -> Result<Row> {
    let (mut builds, mut insts) = (Vec::new(), Vec::new());
    for _ in 0..BUILD_REPS {
        let (us, graph) = time_us(|| Ok(build(&mut *target)?))?;
        builds.push(us);
        let (us, exec) = time_us(|| Ok(graph.instantiate()?))?;
        insts.push(us);
        drop(exec);
    }
    let graph = build(target)?;
    let mut execs = (0..EXECS)
        .map(|_| graph.instantiate())
        .collect::<graph_runtime::Result<Vec<_>>>()?;
    let mut rows = Vec::new();
    for exec in execs.iter_mut() {
        let (upload, ()) = time_us(|| {
            exec.upload(stream)?;
            Ok(stream.synchronize()?)
        })?;
        let row = time_launches(ctx, stream, reps, || Ok(exec.launch(stream)?))?;
        rows.push(Row { upload, ..row });
    }
    stream.synchronize()?;
    Ok(Row {
        build: median(builds),
        instantiate: median(insts),
        upload: rows[0].upload,
        first_launch: rows[0].first_launch,
        launch: median(rows.iter().map(|r| r.launch).collect()),
        device: median(rows.iter().map(|r| r.device).collect()),
    })
}

/// Warm-up, then the medians of `reps` timed launches: host (launch and
/// synchronize) and device (events).
pub(crate) fn repeated(
    ctx: &Arc<CudaContext>,
    stream: &CudaStream,
    reps: usize,
    mut launch: impl FnMut() -> Result,
) -> Result<(f64, f64)> {
    for _ in 0..3 {
        launch()?;
    }
    stream.synchronize()?;
    let timer = DeviceTimer::new(ctx)?;
    let (mut hosts, mut devices) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        let (host, device) = timer.time(stream, &mut launch)?;
        hosts.push(host);
        devices.push(device);
    }
    Ok((median(hosts), median(devices)))
}

/// Every chain's buffer holds the number of kernels that ran on it.
fn check_counts(stream: &Arc<CudaStream>, bufs: &[CudaSlice<f32>], expected: f32) -> Result {
    for (w, buf) in bufs.iter().enumerate() {
        let got = stream.clone_dtoh(buf)?;
        if got.iter().any(|v| *v != expected) {
            return Err(format!("chain {w}: expected {expected}, got {}", got[0]).into());
        }
    }
    Ok(())
}

/// The variants of [`launches`], in the order of [`Launches::rows`]. (Runs
/// 1-21 also built the raw graph with C++'s kernel, which showed that
/// kernel code costs nothing: BENCHMARKS.md, "Build + instantiate".)
pub const LAUNCH_VARIANTS: [&str; 3] = ["macro", "raw", "C++"];

/// Launch and device times of one shape's variants.
#[derive(Debug)]
pub struct Launches {
    /// Per variant of [`LAUNCH_VARIANTS`] (NaN without the C++ library):
    /// upload and first launch of the first slot's exec; launch and device
    /// time the median over slots.
    pub rows: [Row; 3],
    /// Per slot, per variant: (launch, device) us for the whole graph.
    pub slots: Vec<[(f64, f64); 3]>,
}

impl Launches {
    /// Median over slots of variant `a`'s (launch, device) time over `b`'s.
    pub fn paired_ratio(&self, a: usize, b: usize) -> (f64, f64) {
        let ratios = |f: fn(&(f64, f64)) -> f64| {
            median(self.slots.iter().map(|s| f(&s[a]) / f(&s[b])).collect())
        };
        (ratios(|t| t.0), ratios(|t| t.1))
    }
}

/// Launch and device times of every variant of [`LAUNCH_VARIANTS`] over
/// `bufs`. Identical execs launch up to 7% apart depending on where the
/// driver places them, which follows creation order; so each variant has
/// one exec per slot ([`EXECS`] slots), the three execs of a slot are
/// created one after another, and slot by slot each is uploaded, launched
/// once, then timed over `reps` launches after 3 warm-ups (the variants'
/// order rotating from slot to slot). Ratios are then medians of per-slot
/// ratios (see [`Launches::paired_ratio`]). Results are checked: every
/// buffer holds the number of kernels that ran on it.
pub fn launches(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    cpp: Option<&CppLib>,
    bufs: &mut [CudaSlice<f32>],
    length: usize,
    reps: usize,
) -> Result<Launches> {
    zero(stream, bufs)?;
    let width = bufs.len();
    let ptrs: Vec<u64> = bufs.iter().map(|b| device_ptr(b, stream)).collect();
    let ours = kernels::AddOne::load(ctx)?.function().cu_function();
    let variants = if cpp.is_some() { 3 } else { 2 };
    let mut slots: Vec<[Row; 3]> = Vec::new();
    {
        let graph = crate::chains::build_chain(ctx, bufs, width, length)?;
        let raw_exec = |function| -> Result<RawExec> {
            let mut raw = raw_build(function, &ptrs, length, RawAdd::Generic)?;
            raw_instantiate(&mut raw)?;
            Ok(raw)
        };
        let (mut macros, mut raws, mut cpps) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..EXECS {
            macros.push(graph.instantiate()?);
            raws.push(raw_exec(ours)?);
            if let Some(lib) = cpp {
                cpps.push(lib.new_exec(width, length, &ptrs)?);
            }
        }
        let cu_stream = stream.cu_stream();
        for slot in 0..EXECS {
            let mut rows = [Row::UNMEASURED; 3];
            for k in 0..variants {
                let v = (k + slot) % variants;
                rows[v] = match v {
                    0 => {
                        let exec = &mut macros[slot];
                        let (upload, ()) = time_us(|| {
                            exec.upload(stream)?;
                            Ok(stream.synchronize()?)
                        })?;
                        let row = time_launches(ctx, stream, reps, || Ok(exec.launch(stream)?))?;
                        Row { upload, ..row }
                    }
                    1 => {
                        let exec = raws[slot].exec;
                        let (upload, ()) = time_us(|| {
                            // SAFETY: the exec and stream are live.
                            unsafe { sys::cuGraphUpload(exec, cu_stream) }.result()?;
                            Ok(stream.synchronize()?)
                        })?;
                        let row = time_launches(ctx, stream, reps, || {
                            // SAFETY: the exec and stream are live, and so
                            // are the buffers it touches.
                            Ok(unsafe { sys::cuGraphLaunch(exec, cu_stream) }.result()?)
                        })?;
                        Row { upload, ..row }
                    }
                    _ => cpps[slot].time(reps)?,
                };
            }
            slots.push(rows);
        }
        stream.synchronize()?;
    }
    check_counts(
        stream,
        bufs,
        (variants * launches_per_measure(reps)) as f32 * length as f32,
    )?;
    let mut rows = [Row::UNMEASURED; 3];
    for (v, row) in rows.iter_mut().enumerate().take(variants) {
        let times = |f: fn(&Row) -> f64| median(slots.iter().map(|s| f(&s[v])).collect());
        *row = Row {
            upload: slots[0][v].upload,
            first_launch: slots[0][v].first_launch,
            launch: times(|r| r.launch),
            device: times(|r| r.device),
            ..Row::UNMEASURED
        };
    }
    let slots = slots
        .iter()
        .map(|s| s.map(|r| (r.launch, r.device)))
        .collect();
    Ok(Launches { rows, slots })
}

/// The first launch (timed, synchronized), then the medians of `reps`
/// launches after 3 warm-ups: host (launch and synchronize) and device.
fn time_launches(
    ctx: &Arc<CudaContext>,
    stream: &CudaStream,
    reps: usize,
    mut launch: impl FnMut() -> Result,
) -> Result<Row> {
    let (first_launch, ()) = time_us(|| {
        launch()?;
        Ok(stream.synchronize()?)
    })?;
    let (launch, device) = repeated(ctx, stream, reps, launch)?;
    Ok(Row {
        first_launch,
        launch,
        device,
        ..Row::UNMEASURED
    })
}

/// The same kernels on C++ streams (see [`CppLib::streams`]), on buffers
/// checked here: host and device us per round.
pub fn cpp_streams(
    cpp: &CppLib,
    stream: &Arc<CudaStream>,
    bufs: &mut [CudaSlice<f32>],
    length: usize,
    reps: usize,
) -> Result<(f64, f64)> {
    zero(stream, bufs)?;
    let ptrs: Vec<u64> = bufs.iter().map(|b| device_ptr(b, stream)).collect();
    let out = cpp.streams(length, &ptrs, reps)?;
    check_counts(stream, bufs, (3 + reps) as f32 * length as f32)?;
    Ok(out)
}

/// The variants of [`interleaved_builds`], in their column order.
pub const BUILD_VARIANTS: [&str; 3] = ["macro", "raw", "C++"];

/// Build and instantiate times (us) per variant of [`BUILD_VARIANTS`], one
/// sample per round.
#[derive(Debug, Default)]
pub struct BuildRounds {
    pub samples: Vec<Vec<(f64, f64)>>,
}

impl BuildRounds {
    /// Median (build, instantiate) of variant `v`.
    pub fn medians(&self, v: usize) -> (f64, f64) {
        let samples = &self.samples[v];
        (
            median(samples.iter().map(|s| s.0).collect()),
            median(samples.iter().map(|s| s.1).collect()),
        )
    }

    /// Median over rounds of variant `a`'s build + instantiate over `b`'s
    /// in the same round.
    pub fn paired_ratio(&self, a: usize, b: usize) -> f64 {
        paired_median(&self.samples[a], &self.samples[b], |x, y| {
            (x.0 + x.1) / (y.0 + y.1)
        })
    }
}

/// One timed build and one timed instantiation of the macro's chains
/// (`bufs.len()` x `length`), both dropped untimed.
fn macro_build_once(
    ctx: &Arc<CudaContext>,
    bufs: &mut [CudaSlice<f32>],
    length: usize,
) -> Result<(f64, f64)> {
    let width = bufs.len();
    let (build, graph) = time_us(|| Ok(crate::chains::build_chain(ctx, bufs, width, length)?))?;
    let (instantiate, exec) = time_us(|| Ok(graph.instantiate()?))?;
    drop(exec);
    drop(graph);
    Ok((build, instantiate))
}

/// Rounds of build + instantiate measured per round for every variant of
/// [`BUILD_VARIANTS`] (the order rotating from round to round), so that the
/// machine's drift during the run cancels out of each round's ratios.
/// Without the C++ library only the first two variants are measured.
pub fn interleaved_builds(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    cpp: Option<&CppLib>,
    bufs: &mut [CudaSlice<f32>],
    length: usize,
    rounds: usize,
) -> Result<BuildRounds> {
    let width = bufs.len();
    let ptrs: Vec<u64> = bufs.iter().map(|b| device_ptr(b, stream)).collect();
    let ours = kernels::AddOne::load(ctx)?.function().cu_function();
    let variants = if cpp.is_some() {
        BUILD_VARIANTS.len()
    } else {
        2
    };
    let mut out = BuildRounds {
        samples: vec![Vec::new(); variants],
    };
    for round in 0..rounds {
        for k in 0..variants {
            let v = (k + round) % variants;
            let sample = match v {
                0 => macro_build_once(ctx, bufs, length)?,
                1 => raw_build_once(ours, &ptrs, length)?,
                _ => cpp
                    .ok_or("no C++ library")?
                    .build_once(width, length, &ptrs)?,
            };
            out.samples[v].push(sample);
        }
    }
    Ok(out)
}

/// The same kernels issued on streams (chain w on stream w) with raw
/// `cuLaunchKernel`, joined at the end: host and device time per round.
pub fn streams(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    bufs: &mut [CudaSlice<f32>],
    length: usize,
    reps: usize,
) -> Result<(f64, f64)> {
    zero(stream, bufs)?;
    let width = bufs.len();
    let streams: Vec<Arc<CudaStream>> = (0..width)
        .map(|_| ctx.new_stream())
        .collect::<std::result::Result<_, _>>()?;
    let first = &streams[0];
    let ptrs: Vec<u64> = bufs.iter().map(|b| device_ptr(b, first)).collect();
    let function = kernels::AddOne::load(ctx)?.function().cu_function();
    let n: u32 = 32;
    first.synchronize()?;
    let round = || -> Result {
        let start = first.record_event(None)?;
        for s in &streams[1..] {
            s.wait(&start)?;
        }
        for _ in 0..length {
            for (s, ptr) in streams.iter().zip(&ptrs) {
                let mut args = [
                    ptr as *const u64 as *mut c_void,
                    &n as *const u32 as *mut c_void,
                ];
                // SAFETY: the function takes (float*, unsigned); args live for the call.
                unsafe {
                    sys::cuLaunchKernel(
                        function,
                        1,
                        1,
                        1,
                        32,
                        1,
                        1,
                        0,
                        s.cu_stream(),
                        args.as_mut_ptr(),
                        std::ptr::null_mut(),
                    )
                }
                .result()?;
            }
        }
        for s in &streams[1..] {
            first.join(s)?;
        }
        Ok(())
    };
    let (launch, device) = repeated(ctx, first, reps, round)?;
    for s in &streams {
        s.synchronize()?;
    }
    check_counts(first, bufs, (3 + reps) as f32 * length as f32)?;
    Ok((launch, device))
}
