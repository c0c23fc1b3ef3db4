//! NVIDIA's cudaGraphsPerfScaling shape: `width` parallel chains of `length`
//! tiny kernels (1 block x 32 threads, x[i] += 1), built and run four ways:
//! through `cuda_graph!`, through raw driver calls, in C++, and on streams.

use crate::timing::{median, time_us, DeviceTimer, Result};
use graph_runtime::cudarc::driver::{sys, CudaContext, CudaSlice, CudaStream, DevicePtr};
use graph_runtime::kernel::KernelDef;
use std::ffi::c_void;
use std::sync::Arc;

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

pub const BUILD_REPS: usize = 11;

/// The graph built by `cuda_graph!` (see chains.rs).
pub fn macro_graph(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    width: usize,
    length: usize,
    reps: usize,
) -> Result<Row> {
    let mut bufs: Vec<CudaSlice<f32>> = (0..width)
        .map(|_| stream.alloc_zeros::<f32>(32))
        .collect::<std::result::Result<_, _>>()?;
    let row = measure(ctx, stream, bufs.as_mut_slice(), reps, |bufs| {
        crate::chains::build_chain(ctx, bufs, width, length)
    })?;
    check_counts(
        stream,
        &bufs,
        (LAUNCHES_BEFORE_TIMING + reps) as f32 * length as f32,
    )?;
    Ok(row)
}

/// Launches of a measured graph before the timed ones: the first launch and
/// 3 warm-ups.
pub const LAUNCHES_BEFORE_TIMING: usize = 4;

/// Builds (median of `BUILD_REPS`) and instantiates the graph `build` makes
/// over `target`, uploads it, launches it once, then times `reps` launches
/// after 3 warm-ups: `target` sees `LAUNCHES_BEFORE_TIMING + reps` runs.
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
    let mut exec = graph.instantiate()?;
    let (upload, ()) = time_us(|| {
        exec.upload(stream)?;
        Ok(stream.synchronize()?)
    })?;
    let (first_launch, ()) = time_us(|| {
        exec.launch(stream)?;
        Ok(stream.synchronize()?)
    })?;
    let (launch, device) = repeated(ctx, stream, reps, || Ok(exec.launch(stream)?))?;
    stream.synchronize()?;
    Ok(Row {
        build: median(builds),
        instantiate: median(insts),
        upload,
        first_launch,
        launch,
        device,
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

fn device_ptr(slice: &CudaSlice<f32>, stream: &CudaStream) -> u64 {
    let (ptr, guard) = slice.device_ptr(stream);
    drop(guard);
    ptr
}

/// An owned raw graph and exec, destroyed on drop.
struct RawExec {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
}

impl Drop for RawExec {
    fn drop(&mut self) {
        // SAFETY: both handles are owned here and no longer used.
        unsafe {
            if !self.exec.is_null() {
                sys::cuGraphExecDestroy(self.exec);
            }
            sys::cuGraphDestroy(self.graph);
        }
    }
}

/// The same graph through raw cudarc `sys` calls: `cuGraphAddNode` per node,
/// as hand-written driver code would.
pub fn raw_sys(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    width: usize,
    length: usize,
    reps: usize,
) -> Result<Row> {
    let bufs: Vec<CudaSlice<f32>> = (0..width)
        .map(|_| stream.alloc_zeros::<f32>(32))
        .collect::<std::result::Result<_, _>>()?;
    let ptrs: Vec<u64> = bufs.iter().map(|b| device_ptr(b, stream)).collect();
    let function = kernels::AddOne::load(ctx)?.function().cu_function();
    let build = || -> Result<RawExec> {
        let mut raw = RawExec {
            graph: std::ptr::null_mut(),
            exec: std::ptr::null_mut(),
        };
        // SAFETY: a graph created here; the chains' pointers stay live.
        unsafe {
            sys::cuGraphCreate(&mut raw.graph, 0).result()?;
            for &ptr in &ptrs {
                add_raw_chain(raw.graph, function, ptr, length, std::ptr::null_mut())?;
            }
        }
        Ok(raw)
    };
    let instantiate = |raw: &mut RawExec| -> Result {
        let mut params = sys::CUDA_GRAPH_INSTANTIATE_PARAMS {
            flags: 0,
            hUploadStream: std::ptr::null_mut(),
            hErrNode_out: std::ptr::null_mut(),
            result_out: sys::CUgraphInstantiateResult::CUDA_GRAPH_INSTANTIATE_SUCCESS,
        };
        // SAFETY: the graph is live.
        unsafe { sys::cuGraphInstantiateWithParams(&mut raw.exec, raw.graph, &mut params) }
            .result()?;
        Ok(())
    };
    let (mut builds, mut insts) = (Vec::new(), Vec::new());
    for _ in 0..BUILD_REPS {
        let (b, mut raw) = time_us(build)?;
        let (i, ()) = time_us(|| instantiate(&mut raw))?;
        builds.push(b);
        insts.push(i);
    }
    let mut raw = build()?;
    instantiate(&mut raw)?;
    let cu_stream = stream.cu_stream();
    let (upload, ()) = time_us(|| {
        // SAFETY: the exec and stream are live.
        unsafe { sys::cuGraphUpload(raw.exec, cu_stream) }.result()?;
        Ok(stream.synchronize()?)
    })?;
    let (first, ()) = time_us(|| {
        // SAFETY: the exec and stream are live.
        unsafe { sys::cuGraphLaunch(raw.exec, cu_stream) }.result()?;
        Ok(stream.synchronize()?)
    })?;
    let exec = raw.exec;
    // SAFETY: as above.
    let (launch, device) = repeated(ctx, stream, reps, || {
        // SAFETY: the exec and stream are live.
        Ok(unsafe { sys::cuGraphLaunch(exec, cu_stream) }.result()?)
    })?;
    drop(raw);
    check_counts(
        stream,
        &bufs,
        (LAUNCHES_BEFORE_TIMING + reps) as f32 * length as f32,
    )?;
    Ok(Row {
        build: median(builds),
        instantiate: median(insts),
        upload,
        first_launch: first,
        launch,
        device,
    })
}

/// The same kernels issued on streams (chain w on stream w) with raw
/// `cuLaunchKernel`, joined at the end: host and device time per round.
pub fn streams(
    ctx: &Arc<CudaContext>,
    width: usize,
    length: usize,
    reps: usize,
) -> Result<(f64, f64)> {
    let streams: Vec<Arc<CudaStream>> = (0..width)
        .map(|_| ctx.new_stream())
        .collect::<std::result::Result<_, _>>()?;
    let first = &streams[0];
    let bufs: Vec<CudaSlice<f32>> = (0..width)
        .map(|_| first.alloc_zeros::<f32>(32))
        .collect::<std::result::Result<_, _>>()?;
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
    check_counts(first, &bufs, (3 + reps) as f32 * length as f32)?;
    Ok((launch, device))
}

/// Where build time goes (us, medians): graph creation, the kernel lookup,
/// and one chain of 10 and of 1,000 nodes built through the runtime API and
/// through the macro, and the drop of the 10-node graph.
pub fn build_breakdown(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>) -> Result<String> {
    let mut bufs = vec![stream.alloc_zeros::<f32>(32)?];
    let kernel = kernels::AddOne::load(ctx)?;
    let sample = |reps: usize, f: &mut dyn FnMut() -> Result<f64>| -> Result<f64> {
        let samples = (0..reps).map(|_| f()).collect::<Result<Vec<f64>>>()?;
        Ok(median(samples))
    };
    let create = sample(51, &mut || {
        Ok(time_us(|| Ok(graph_runtime::Graph::new(ctx)?))?.0)
    })?;
    let lookup = sample(51, &mut || {
        Ok(time_us(|| Ok(kernels::AddOne::load(ctx)?))?.0)
    })?;
    let mut out =
        format!("build breakdown (us): Graph::new {create:.2}, kernel lookup {lookup:.2}");
    for (length, reps) in [(10, 51), (1000, 11)] {
        let runtime_api = sample(reps, &mut || {
            let (us, graph) = time_us(|| {
                let mut g = graph_runtime::Graph::new(ctx)?;
                let x = g.bind_mut(&mut bufs[0]);
                let mut prev: Option<graph_runtime::Node> = None;
                for i in 0..length {
                    let deps: &[graph_runtime::Node] = match &prev {
                        Some(p) => std::slice::from_ref(p),
                        None => &[],
                    };
                    let node = g.add_kernel(
                        if i == 0 { "first" } else { "next" },
                        &kernel,
                        graph_runtime::LaunchConfig::new(1, 32),
                        (x, 32),
                        deps,
                    )?;
                    prev = Some(node.node());
                }
                Ok(g)
            })?;
            drop(graph);
            Ok(us)
        })?;
        let via_macro = sample(reps, &mut || {
            let (us, graph) =
                time_us(|| Ok(crate::chains::build_chain(ctx, &mut bufs, 1, length)?))?;
            drop(graph);
            Ok(us)
        })?;
        out.push_str(&format!(
            "; 1x{length}: runtime API {runtime_api:.2}, macro {via_macro:.2}"
        ));
    }
    // The driver alone: a raw 1,000-node chain with the kernel's context
    // left null (current) or given explicitly.
    let function = kernel.function().cu_function();
    let ptr = device_ptr(&bufs[0], stream);
    for (what, context) in [("null", std::ptr::null_mut()), ("explicit", ctx.cu_ctx())] {
        let us = sample(11, &mut || raw_chain_build_us(function, ptr, 1000, context))?;
        out.push_str(&format!("; raw 1x1000 with {what} context {us:.2}"));
    }
    let dropping = sample(51, &mut || {
        let graph = crate::chains::build_chain(ctx, &mut bufs, 1, 10)?;
        Ok(time_us(|| {
            drop(graph);
            Ok(())
        })?
        .0)
    })?;
    out.push_str(&format!("; drop of 1x10 {dropping:.2}\n"));
    Ok(out)
}

/// Microseconds to build a raw chain of `length` AddOne nodes on `ptr`
/// (the graph is destroyed after).
fn raw_chain_build_us(
    function: sys::CUfunction,
    ptr: u64,
    length: usize,
    context: sys::CUcontext,
) -> Result<f64> {
    let mut raw = RawExec {
        graph: std::ptr::null_mut(),
        exec: std::ptr::null_mut(),
    };
    let (us, ()) = time_us(|| {
        // SAFETY: a graph created here, on a live device pointer.
        unsafe {
            sys::cuGraphCreate(&mut raw.graph, 0).result()?;
            add_raw_chain(raw.graph, function, ptr, length, context)
        }
    })?;
    drop(raw);
    Ok(us)
}

/// Adds a chain of `length` AddOne nodes (1 x 32 threads on `ptr`) to
/// `graph` with raw `cuGraphAddNode` calls, the kernel's context `context`
/// (null: the current one).
///
/// # Safety
/// `graph` is live and `ptr` a live device allocation of 32 floats.
unsafe fn add_raw_chain(
    graph: sys::CUgraph,
    function: sys::CUfunction,
    ptr: u64,
    length: usize,
    context: sys::CUcontext,
) -> Result {
    let n: u32 = 32;
    let mut prev: Option<sys::CUgraphNode> = None;
    for _ in 0..length {
        let mut args = [
            &ptr as *const u64 as *mut c_void,
            &n as *const u32 as *mut c_void,
        ];
        // SAFETY: zeroed node params are valid; the kernel member is set.
        let mut params: sys::CUgraphNodeParams = unsafe { std::mem::zeroed() };
        params.type_ = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL;
        // SAFETY: writing the kernel member of the params union.
        let kernel = unsafe { &mut params.__bindgen_anon_1.kernel };
        kernel.func = function;
        (kernel.gridDimX, kernel.gridDimY, kernel.gridDimZ) = (1, 1, 1);
        (kernel.blockDimX, kernel.blockDimY, kernel.blockDimZ) = (32, 1, 1);
        kernel.kernelParams = args.as_mut_ptr();
        kernel.ctx = context;
        let mut node = std::ptr::null_mut();
        let deps = prev.as_ref().map_or(std::ptr::null(), |p| p as *const _);
        // SAFETY: the graph is live (caller); params point to live locals.
        unsafe {
            sys::cuGraphAddNode(
                &mut node,
                graph,
                deps,
                usize::from(prev.is_some()),
                &mut params,
            )
        }
        .result()?;
        prev = Some(node);
    }
    Ok(())
}
