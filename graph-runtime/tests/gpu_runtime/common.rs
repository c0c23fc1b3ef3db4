use cudarc::driver::{CudaContext, CudaSlice, CudaStream, CudaViewMut, PushKernelArg};
use graph_runtime::cudarc;
use graph_runtime::kernel::KernelDef;
use std::sync::{Arc, Mutex, MutexGuard};

/// The device's primary context; fails the test without a driver.
pub fn gpu() -> Arc<CudaContext> {
    // GPU tests are `#[ignore]`d: they run only when asked for
    // (`--include-ignored`, as `.gpu/run.sh` does), so a missing driver is
    // a failure, never a silent pass.
    assert!(
        graph_runtime::driver::driver_available(),
        "this test needs a CUDA GPU, and no CUDA driver could be loaded"
    );
    graph_runtime::driver::context(0).expect("a context on device 0")
}

/// A fresh context of its own, for tests that change context-wide settings
/// (event tracking) or must not see other tests' streams.
pub fn own_context() -> Arc<CudaContext> {
    gpu();
    CudaContext::new_non_primary(0, 0).expect("a non-primary context")
}

/// Serializes tests that allocate graph memory or read the device's
/// graph-memory attributes (they are per device, not per context).
pub fn graph_memory_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Asserts that `err` refuses a handle of another graph, level or context:
/// `GraphError::ForeignHandle` of kind `what`, naming node `label`.
#[track_caller]
pub fn assert_foreign(
    err: &graph_runtime::GraphError,
    what: graph_runtime::error::Foreign,
    label: &str,
) {
    assert!(
        matches!(err, graph_runtime::GraphError::ForeignHandle { what: kind, label: Some(named), .. }
            if *kind == what && named == label),
        "expected ForeignHandle {{ what: {what:?}, label: {label:?} }}, got {err:?}"
    );
}

pub fn sync(stream: &Arc<CudaStream>) {
    stream.synchronize().expect("stream synchronize");
}

/// Fills `view` with `value` on `stream` through cudarc (not a graph),
/// after spinning `cycles` clock cycles: a write slow enough to expose a
/// launch that does not wait for it.
pub fn slow_fill_on(
    stream: &Arc<CudaStream>,
    view: &mut CudaViewMut<'_, f32>,
    value: f32,
    cycles: i64,
) {
    let slow = kernels::SlowFill::load(stream.context()).unwrap();
    let n = view.len() as u32;
    let config = cudarc::driver::LaunchConfig {
        grid_dim: (132, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: slow_fill(float* x, float value, unsigned n, long long
    // cycles) over the view's n elements.
    unsafe {
        stream
            .launch_builder(slow.function())
            .arg(view)
            .arg(&value)
            .arg(&n)
            .arg(&cycles)
            .launch(config)
            .unwrap();
    }
}

/// An exec whose launches each make an allocation of `n` floats (`data`,
/// filled with 0..n) that nothing in its graph frees, and that buffer.
pub fn escaping_iota(
    ctx: &Arc<CudaContext>,
    n: u32,
) -> (
    graph_runtime::Exec<'static>,
    graph_runtime::Buf<'static, f32>,
) {
    let iota = kernels::Iota::load(ctx).unwrap();
    let mut make = graph_runtime::Graph::new(ctx).unwrap();
    let (alloc, data) = make.add_alloc::<f32>("data", n as usize, &[]).unwrap();
    let config = graph_runtime::LaunchConfig::for_elements(n, 256);
    make.add_kernel("fill", &iota, config, (data, n), &[alloc])
        .unwrap();
    (make.instantiate().unwrap(), data)
}

/// A graph of one slow fill of `x` with 7s (`spin` cycles a thread),
/// instantiated and launched on a stream made with `new_stream` (so
/// cudarc's tracking is on, asserted): the exec and that stream, the fill
/// still running. (The attack suite's; other binaries share this file.)
#[allow(dead_code)]
pub fn slow_fill_launched<'a>(
    ctx: &Arc<CudaContext>,
    x: &'a mut CudaSlice<f32>,
    spin: i64,
) -> (graph_runtime::Exec<'a>, Arc<CudaStream>) {
    let slow = kernels::SlowFill::load(ctx).unwrap();
    let n = x.len() as u32;
    let mut g = graph_runtime::Graph::new(ctx).unwrap();
    let xb = g.bind_mut(x);
    g.add_kernel(
        "slow_fill",
        &slow,
        graph_runtime::LaunchConfig::new(132, 256),
        (xb, 7.0, n, spin),
        &[],
    )
    .unwrap();
    let mut exec = g.instantiate().unwrap();
    let stream = ctx.new_stream().unwrap();
    assert!(ctx.is_managing_stream_synchronization());
    exec.launch(&stream).unwrap();
    (exec, stream)
}

/// The number after `field: ` in a graph's `Debug` output.
pub fn debug_count(graph: &graph_runtime::Graph<'_>, field: &str) -> usize {
    let text = format!("{graph:?}");
    let at = text
        .find(&format!("{field}: "))
        .unwrap_or_else(|| panic!("no `{field}` in {text}"));
    let digits: String = text[at + field.len() + 2..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap()
}
