//! One cycle of work over every node kind, checked after every launch: the
//! unit of the soak (`gpu_soak`) and of the concurrency test
//! (`gpu_concurrency`).
//!
//! A cycle builds, instantiates, launches, updates per node, relaunches and
//! drops three graphs:
//! - the main graph: copy in (host to device), alloc / kernels / copy /
//!   free, fill, IF, WHILE, SWITCH, host node, empty, child graph, event
//!   record and wait, a stream capture, a kept value (user object), copy
//!   out into a graph-owned host buffer; one per-node update;
//! - a graph without memory nodes, updated whole from a rebuilt graph;
//! - a device-launch pair: a kernel of one exec launches the other.

use graph_runtime::cudarc::driver::DevicePtrMut;
use graph_runtime::cudarc::driver::{result as cu, CudaContext, CudaEvent, CudaSlice, CudaStream};
use graph_runtime::kernel::KernelDef;
use graph_runtime::{capture::captured, Graph, InstantiateOptions, Kernel, LaunchConfig, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

pub const N: u32 = 1024;

/// Whether CUDA_GRAPH_LOAD_SKIP (comma-separated) names `part`: a
/// diagnostic switch, to find which part of a cycle a failure (or a
/// sanitizer's hang) needs. Unset: every part runs. Parts: `host` (the host
/// node becomes an empty node), `capture` (the memset runs on the stream
/// instead), `device` (no device launch; the copy it makes is made by the
/// host), `if`, `while`, `switch` (that conditional becomes the kernels
/// its body runs; `cond`: all three), `alloc` (the scratch allocation
/// becomes a bound slice), `child` (the child graph's kernel is a node of
/// the parent), `event` (no event record and wait), `update`
/// (the whole-graph update waits for the launch before it).
fn skip(part: &str) -> bool {
    let conditional = matches!(part, "if" | "while" | "switch");
    std::env::var("CUDA_GRAPH_LOAD_SKIP").is_ok_and(|v| {
        v.split(',')
            .any(|p| p == part || (conditional && p == "cond"))
    })
}

/// The kernels of a cycle, loaded once per context.
pub struct Kernels {
    add: Kernel<<kernels::Add as KernelDef>::Args>,
    scale: Kernel<<kernels::Scale as KernelDef>::Args>,
    iota: Kernel<<kernels::Iota as KernelDef>::Args>,
    add_one: Kernel<<kernels::AddOne as KernelDef>::Args>,
    set_condition: Kernel<<kernels::SetCondition as KernelDef>::Args>,
    step: Kernel<<kernels::CountdownStep as KernelDef>::Args>,
    mark: Kernel<<kernels::Mark as KernelDef>::Args>,
    launch: Kernel<<kernels::LaunchGraph as KernelDef>::Args>,
}

impl Kernels {
    pub fn load(ctx: &Arc<CudaContext>) -> Result<Kernels> {
        Ok(Kernels {
            add: kernels::Add::load(ctx)?,
            scale: kernels::Scale::load(ctx)?,
            iota: kernels::Iota::load(ctx)?,
            add_one: kernels::AddOne::load(ctx)?,
            set_condition: kernels::SetCondition::load(ctx)?,
            step: kernels::CountdownStep::load(ctx)?,
            mark: kernels::Mark::load(ctx)?,
            launch: kernels::LaunchGraph::load(ctx)?,
        })
    }
}

/// The buffers a worker's cycles use (made once, reused by every cycle).
pub struct Data {
    x_h: Vec<f32>,
    x: CudaSlice<f32>,
    y: CudaSlice<f32>,
    w: CudaSlice<f32>,
    t: CudaSlice<f32>,
    /// The scratch buffer when `alloc` is skipped.
    scratch: CudaSlice<f32>,
    z: CudaSlice<u8>,
    visits: CudaSlice<i32>,
    counter: CudaSlice<i32>,
    ev: CudaEvent,
    host_calls: Arc<AtomicUsize>,
    kept: Arc<()>,
}

impl Data {
    pub fn new(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>) -> Result<Data> {
        let n = N as usize;
        let op = |e| captured("alloc", e);
        Ok(Data {
            x_h: (0..N).map(|i| i as f32).collect(),
            x: stream.alloc_zeros(n).map_err(op)?,
            y: stream.alloc_zeros(n).map_err(op)?,
            w: stream.alloc_zeros(n).map_err(op)?,
            t: stream.alloc_zeros(n).map_err(op)?,
            scratch: stream.alloc_zeros(n).map_err(op)?,
            z: stream.alloc_zeros(n).map_err(op)?,
            visits: stream.alloc_zeros(3).map_err(op)?,
            counter: stream.alloc_zeros(1).map_err(op)?,
            ev: ctx.new_event(None).map_err(|e| captured("new_event", e))?,
            host_calls: Arc::new(AtomicUsize::new(0)),
            kept: Arc::new(()),
        })
    }
}

/// Fails the test on a wrong value read back, naming the cycle, the check
/// and what was seen (a panic: a worker thread's reaches its join).
#[track_caller]
fn check(cycle: u64, what: &str, ok: bool, seen: impl std::fmt::Debug) -> Result<()> {
    assert!(ok, "cycle {cycle}: {what}: read {seen:?}");
    Ok(())
}

fn read<T: graph_runtime::bytemuck::Pod + graph_runtime::cudarc::driver::DeviceRepr>(
    stream: &Arc<CudaStream>,
    view: &graph_runtime::cudarc::driver::CudaView<'_, T>,
) -> Result<Vec<T>> {
    stream
        .clone_dtoh(view)
        .map_err(|e| captured("clone_dtoh", e))
}

/// One cycle (see the module docs). Every launch's results are read back
/// and checked; a wrong value is an error naming the cycle and the check.
pub fn cycle(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    k: &Kernels,
    d: &mut Data,
    cycle: u64,
) -> Result<()> {
    let elements = LaunchConfig::for_elements(N, 256);
    let one = LaunchConfig::new(1, 1);
    // The capture writes `z` through its raw address (a capture cannot
    // borrow what it touches; `d.z` outlives the graph and exec).
    let z_ptr = {
        let (ptr, _sync) = d.z.device_ptr_mut(stream);
        ptr
    };
    let calls_before = d.host_calls.load(Ordering::SeqCst);

    // The main graph.
    {
        let mut g = Graph::new(ctx)?;
        let x = g.bind_mut(&mut d.x);
        let w = g.bind_mut(&mut d.w);
        let visits = g.bind_mut(&mut d.visits);
        let counter = g.bind_mut(&mut d.counter);
        let out = g.add_host_buffer::<f32>(N as usize)?;
        let up = g.add_copy("up", &d.x_h[..], x, &[])?;
        let bound_scratch = skip("alloc");
        let (alloc, scratch) = if bound_scratch {
            (g.add_empty("scratch", &[])?, g.bind_mut(&mut d.scratch))
        } else {
            g.add_alloc::<f32>("scratch", N as usize, &[])?
        };
        let iota = g.add_kernel("iota", &k.iota, elements, (scratch, N), &[alloc])?;
        let sum = g.add_kernel(
            "sum",
            &k.add,
            elements,
            (x, scratch, scratch, N),
            &[up, iota.node()],
        )?;
        let back = g.add_copy("back", scratch, x, &[sum.node()])?;
        if bound_scratch {
            g.add_empty("free", &[back])?;
        } else {
            g.add_free("free", scratch, &[back])?;
        }
        let scale = g.add_kernel("scale", &k.scale, elements, (x, 2.0f32, N), &[back])?;
        let down = g.add_copy("down", x, &out, &[scale.node()])?;
        let calls = d.host_calls.clone();
        let host = if skip("host") {
            calls.fetch_add(2, Ordering::SeqCst); // as two launches would
            g.add_empty("count", &[down])?
        } else {
            g.add_host(
                "count",
                move || {
                    calls.fetch_add(1, Ordering::SeqCst);
                },
                &[down],
            )?
        };
        let reset = g.add_fill("reset", counter, 3i32, &[])?;
        // Each conditional, or (skipped) the kernels its body runs as plain
        // nodes: one IF visit, three WHILE visits, one SWITCH visit per launch.
        let when = if skip("if") {
            g.add_kernel("mark_if", &k.mark, one, (visits, 0u32), &[])?
                .node()
        } else {
            let if_cond = g.cond_handle(Some(1))?;
            g.add_if("when", if_cond, &[], |b| {
                b.add_kernel("mark_if", &k.mark, one, (visits, 0u32), &[])?;
                Ok(())
            })?
        };
        let repeat = if skip("while") {
            let mut last = reset;
            for step in 0..3 {
                let deps = if step == 0 {
                    vec![when, last]
                } else {
                    vec![last]
                };
                last = g
                    .add_kernel("mark_while", &k.mark, one, (visits, 1u32), &deps)?
                    .node();
            }
            last
        } else {
            let while_cond = g.cond_handle(Some(1))?;
            g.add_while("repeat", while_cond, &[when, reset], |b| {
                let step = b.add_kernel("step", &k.step, one, (while_cond, counter), &[])?;
                b.add_kernel("mark_while", &k.mark, one, (visits, 1u32), &[step.node()])?;
                Ok(())
            })?
        };
        let choose = if skip("switch") {
            g.add_kernel("mark_switch", &k.mark, one, (visits, 2u32), &[repeat])?
                .node()
        } else {
            let switch_cond = g.cond_handle(None)?;
            let pick = g.add_kernel("pick", &k.set_condition, one, (switch_cond, 2u32), &[])?;
            g.add_switch(
                "choose",
                switch_cond,
                3,
                &[repeat, pick.node()],
                |arm, b| {
                    match arm {
                        2 => b
                            .add_kernel("mark_switch", &k.mark, one, (visits, 2u32), &[])?
                            .node(),
                        _ => b.add_empty("idle", &[])?,
                    };
                    Ok(())
                },
            )?
        };
        let join = g.add_empty("join", &[host, choose])?;
        let sub = if skip("child") {
            g.add_kernel("bump", &k.add_one, elements, (w, N), &[join])?
                .node()
        } else {
            let mut child = g.child_graph()?;
            child.add_kernel("bump", &k.add_one, elements, (w, N), &[])?;
            g.add_child("child", child, &[join])?
        };
        let wait = if skip("event") {
            g.add_empty("wait", &[sub])?
        } else {
            let record = g.add_event_record("record", &d.ev, &[sub])?;
            g.add_event_wait("wait", &d.ev, &[record])?
        };
        let memset = |s: &Arc<CudaStream>| {
            // SAFETY: `z_ptr` is `d.z`'s address, N bytes long.
            unsafe { cu::memset_d8_async(z_ptr, 7, N as usize, s.cu_stream()) }
                .map_err(|e| captured("cuMemsetD8Async", e))
        };
        if skip("capture") {
            memset(stream)?;
        } else {
            // SAFETY: the captured memset writes `d.z`, which outlives this
            // graph and its exec (both dropped at the end of this block).
            unsafe { g.add_capture("capture", stream, &[wait], |cap| memset(cap.stream()))? };
        }
        g.keep_alive(d.kept.clone())?;
        let mut exec = g.instantiate()?;
        for (launch, factor) in [(0u32, 2.0f32), (1, 3.0)] {
            if launch == 1 {
                exec.set_kernel_args(&scale, (x, factor, N))?;
            }
            exec.launch(stream)?;
            exec.synchronize()?;
            let host = exec.host_data(&out)?;
            let ok = host
                .iter()
                .enumerate()
                .all(|(i, v)| *v == 2.0 * factor * i as f32);
            check(cycle, "x = 2 i * factor", ok, &host[..4])?;
        }
        let visits_now = read(stream, &exec.bound_mut(visits)?.view())?;
        check(
            cycle,
            "visits (if, while, switch)",
            visits_now == [2, 6, 2],
            &visits_now,
        )?;
        let w_now = read(stream, &exec.bound_mut(w)?.view())?;
        check(
            cycle,
            "child graph",
            w_now.iter().all(|v| *v == 2.0),
            &w_now[..2],
        )?;
    }
    let calls = d.host_calls.load(Ordering::SeqCst) - calls_before;
    check(cycle, "host node calls", calls == 2, calls)?;
    let z = read(stream, &d.z.slice(..))?;
    check(cycle, "captured memset", z.iter().all(|v| *v == 7), &z[..2])?;

    // Whole-graph update from a rebuilt graph (no memory nodes).
    {
        fn build<'a>(
            g: &mut Graph<'a>,
            k: &Kernels,
            y: graph_runtime::Buf<'a, f32>,
            factor: f32,
        ) -> Result<()> {
            let fill = g.add_fill("one", y, 1.0f32, &[])?;
            let config = LaunchConfig::for_elements(N, 256);
            let scale = g.add_kernel("scale", &k.scale, config, (y, factor, N), &[fill])?;
            g.add_empty("done", &[scale.node()])?;
            Ok(())
        }
        let mut g = Graph::new(ctx)?;
        let y = g.bind_mut(&mut d.y);
        build(&mut g, k, y, 4.0)?;
        let mut exec = g.instantiate()?;
        exec.launch(stream)?;
        let mut rebuilt = g.new_sharing()?;
        build(&mut rebuilt, k, y, 5.0)?;
        if skip("update") {
            exec.synchronize()?;
        }
        exec.update(&rebuilt)?;
        exec.launch(stream)?;
        let y_now = read(stream, &exec.bound_mut(y)?.view())?;
        check(
            cycle,
            "updated scale",
            y_now.iter().all(|v| *v == 5.0),
            &y_now[..2],
        )?;
    }

    // A kernel of one exec launches another from the device.
    if skip("device") {
        stream
            .memcpy_htod(&[1.0f32; N as usize], &mut d.t)
            .map_err(|e| captured("memcpy_htod", e))?;
    } else {
        let device = InstantiateOptions::default().device_launch(true);
        let mut target = Graph::new(ctx)?;
        let t = target.bind_mut(&mut d.t);
        target.add_kernel("bump", &k.add_one, elements, (t, N), &[])?;
        let mut target_exec = target.instantiate_with(&device)?;
        target_exec.upload(stream)?;
        {
            let handle = target_exec.device_handle()?;
            let mut launcher = Graph::new(ctx)?;
            launcher.add_kernel("launch", &k.launch, one, (handle, 1u32), &[])?;
            let mut exec = launcher.instantiate_with(&device)?;
            exec.upload(stream)?;
            exec.launch(stream)?;
            exec.synchronize()?;
        }
        target_exec.synchronize()?;
    }
    let t = read(stream, &d.t.slice(..))?;
    check(cycle, "device launch", t.iter().all(|v| *v == 1.0), &t[..2])?;
    // Reset what accumulates, for the next cycle's checks.
    stream
        .memset_zeros(&mut d.visits)
        .and_then(|()| stream.memset_zeros(&mut d.w))
        .and_then(|()| stream.memset_zeros(&mut d.z))
        .and_then(|()| stream.memset_zeros(&mut d.t))
        .map_err(|e| captured("memset_zeros", e))?;
    Ok(())
}

/// How many graphs and execs still hold the kept value (its user objects
/// are released on the runtime's reaper thread, soon after the drops).
pub fn kept_holders(d: &Data) -> usize {
    Arc::strong_count(&d.kept) - 1
}

/// This process's resident set, in bytes (Linux; 0 elsewhere).
pub fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}
