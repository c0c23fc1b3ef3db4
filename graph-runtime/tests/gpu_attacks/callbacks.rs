//! Class 6: driver callbacks that call CUDA, or panic.
//!
//! NVIDIA: a host function or user-object destructor must not make CUDA
//! calls (it runs on a driver thread; a call can deadlock or fail). Yet a
//! value kept alive by a graph may own a `CudaSlice` (whose drop calls
//! CUDA), and a host closure may call anything. The runtime runs both on
//! threads of its own, so these must simply work; and a panicking host
//! closure must not unwind into the driver: the graph goes on.
//!
//! A host node's driver callback still waits for its closure, so a closure
//! that calls CUDA can deadlock with another thread's call that waits for
//! the context's work while holding a driver lock (see the ignored test at
//! the end); the test of CUDA calls from a host closure therefore uses a
//! context of its own.

use crate::common::{gpu, own_context, sync};
use crate::{iota_times, wait_until};
use cudarc::driver::CudaSlice;
use graph_runtime::kernel::KernelDef;
use graph_runtime::{cudarc, Graph, LaunchConfig};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const N: u32 = 4096;
/// How long a user object's destructor may take to run once its last
/// holder is gone (the driver runs it asynchronously).
const DROP_LIMIT: Duration = Duration::from_secs(5);

/// A kept value that owns a device slice. Its drop calls CUDA: it reads the
/// slice back, frees it, synchronizes, and only then counts itself dropped.
struct ReadsBackOnDrop {
    slice: Option<CudaSlice<f32>>,
    read: Arc<Mutex<Option<Vec<f32>>>>,
    drops: Arc<AtomicUsize>,
}

impl Drop for ReadsBackOnDrop {
    fn drop(&mut self) {
        if let Some(slice) = self.slice.take() {
            let stream = slice.stream().clone();
            let read = stream.clone_dtoh(&slice).ok();
            drop(slice);
            if stream.synchronize().is_ok() {
                *self.read.lock().unwrap() = read;
            }
        }
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// What the host closure read: a value it copied in and out, and its own slice.
type Record = (Vec<f32>, Vec<f32>);

/// Counts its drops.
struct DropCounter(Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Attack: `keep_alive` a value that owns a `CudaSlice` and reads it back,
/// frees it and synchronizes in its `Drop` (CUDA calls from a destructor
/// the driver triggers), and drop the graph and the exec right after a
/// launch.
///
/// Must happen: the value is not dropped while the exec lives; once both
/// are gone it is dropped exactly once (polled up to `DROP_LIMIT`), its
/// CUDA calls succeeded (it read back `[4, 5, 6]`), no error was recorded in
/// the context, and the graph's own result is there.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_kept_value_whose_drop_calls_cuda_is_dropped() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let iota = kernels::Iota::load(&ctx).unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    let read = Arc::new(Mutex::new(None));
    let owned = stream.clone_htod(&[4.0f32, 5.0, 6.0]).unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        g.keep_alive(ReadsBackOnDrop {
            slice: Some(owned),
            read: read.clone(),
            drops: drops.clone(),
        })
        .unwrap();
        g.add_kernel(
            "iota",
            &iota,
            LaunchConfig::for_elements(N, 256),
            (xb, N),
            &[],
        )
        .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        drop(g);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(drops.load(Ordering::SeqCst), 0, "the exec still holds it");
        drop(exec);
    }
    assert!(
        wait_until(DROP_LIMIT, || drops.load(Ordering::SeqCst) == 1),
        "the kept value was not dropped"
    );
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(drops.load(Ordering::SeqCst), 1, "dropped exactly once");
    assert_eq!(read.lock().unwrap().as_deref(), Some(&[4.0, 5.0, 6.0][..]));
    assert!(ctx.check_err().is_ok());
    assert_eq!(stream.clone_dtoh(&x).unwrap(), iota_times(N, 1.0));
}

/// Attack: a host node between two kernels whose closure calls CUDA on a
/// different stream: allocates and copies a value in and out, reads a slice
/// it owns, synchronizes that stream. The closure also owns a `CudaSlice`
/// and a drop counter, so its own drop calls CUDA. Launched three times.
///
/// Must happen: every call the closure makes succeeds and returns the right
/// data (three records of `[42]` and `[1, 2, 3]`); the kernel after the host
/// node runs after it (x = 2 * i); once the graph and exec are gone the
/// closure is dropped (polled up to `DROP_LIMIT`) and no error was recorded.
///
/// It runs in a context of its own: a `cuCtxSynchronize` of the same context
/// on another thread while the closure runs deadlocks (see the ignored test
/// below), and the other tests of this binary synchronize the primary
/// context (cudarc's `new_stream` does, on a fresh `CudaContext` handle).
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_host_node_may_call_cuda_on_another_stream() {
    let ctx = own_context();
    let stream = ctx.new_stream().unwrap();
    let side = ctx.new_stream().unwrap();
    let (iota, scale) = (
        kernels::Iota::load(&ctx).unwrap(),
        kernels::Scale::load(&ctx).unwrap(),
    );
    let cfg = LaunchConfig::for_elements(N, 256);
    let owned = side.clone_htod(&[1.0f32, 2.0, 3.0]).unwrap();
    side.synchronize().unwrap();
    let records: Arc<Mutex<Vec<Record>>> = Arc::default();
    let drops = Arc::new(AtomicUsize::new(0));
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        let fill = g.add_kernel("iota", &iota, cfg, (xb, N), &[]).unwrap();
        let (side, records, counter) = (side.clone(), records.clone(), DropCounter(drops.clone()));
        let host = g
            .add_host(
                "host_calls_cuda",
                move || {
                    let _ = &counter;
                    let fresh = side.clone_htod(&[42.0f32]).unwrap();
                    let back = side.clone_dtoh(&fresh).unwrap();
                    let mine = side.clone_dtoh(&owned).unwrap();
                    side.synchronize().unwrap();
                    records.lock().unwrap().push((back, mine));
                },
                &[fill.node()],
            )
            .unwrap();
        g.add_kernel("scale", &scale, cfg, (xb, 2.0, N), &[host])
            .unwrap();
        let mut exec = g.instantiate().unwrap();
        for _ in 0..3 {
            exec.launch(&stream).unwrap();
        }
        sync(&stream);
    }
    let records = records.lock().unwrap().clone();
    assert_eq!(records.len(), 3, "the host node ran once per launch");
    for (back, mine) in &records {
        assert_eq!(back, &[42.0]);
        assert_eq!(mine, &[1.0, 2.0, 3.0]);
    }
    assert_eq!(stream.clone_dtoh(&x).unwrap(), iota_times(N, 2.0));
    assert!(
        wait_until(DROP_LIMIT, || drops.load(Ordering::SeqCst) == 1),
        "the host closure was not dropped"
    );
    assert!(ctx.check_err().is_ok());
}

/// Attack: a host closure that panics, between two kernels, followed by
/// another host node; launched twice.
///
/// Must happen: the panic does not unwind into the driver and does not stop
/// the graph: the kernel after it runs (x = 3 * i) and the counting host node
/// after it runs once per launch; the runtime's host-node thread survives
/// (a second graph's host node runs too).
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_panicking_host_closure_does_not_stop_the_graph() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let (iota, scale) = (
        kernels::Iota::load(&ctx).unwrap(),
        kernels::Scale::load(&ctx).unwrap(),
    );
    let cfg = LaunchConfig::for_elements(N, 256);
    let calls = Arc::new(AtomicUsize::new(0));
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        let fill = g.add_kernel("iota", &iota, cfg, (xb, N), &[]).unwrap();
        let boom = g
            .add_host("boom", || panic!("a host closure panicked"), &[fill.node()])
            .unwrap();
        let tripled = g
            .add_kernel("scale", &scale, cfg, (xb, 3.0, N), &[boom])
            .unwrap();
        let counter = calls.clone();
        g.add_host(
            "count",
            move || {
                counter.fetch_add(1, Ordering::SeqCst);
            },
            &[tripled.node()],
        )
        .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        exec.launch(&stream).unwrap();
        sync(&stream);

        let mut other = Graph::new(&ctx).unwrap();
        let counter = calls.clone();
        other
            .add_host(
                "count_again",
                move || {
                    counter.fetch_add(10, Ordering::SeqCst);
                },
                &[],
            )
            .unwrap();
        other.instantiate().unwrap().launch(&stream).unwrap();
        sync(&stream);
    }
    assert_eq!(calls.load(Ordering::SeqCst), 12);
    assert_eq!(stream.clone_dtoh(&x).unwrap(), iota_times(N, 3.0));
    assert!(ctx.check_err().is_ok());
}

/// Attack (still open; ignored until the runtime handles it): a host
/// closure calls CUDA (it allocates on another stream, which creates events)
/// while another thread of the same context destroys an exec with a
/// conditional node. The host node's driver callback waits for the closure
/// (it runs on the runtime's host-node thread). In the full suite on driver
/// 580.x (H200) the closure's `cuEventCreate` waited for a driver lock
/// forever, and with it every other CUDA call of the process, while one
/// thread sat in `cuGraphExecDestroy` of an exec with an IF node (which
/// seems to wait, holding that lock, for the context's work: the graph
/// stuck in the host node). A closure that sleeps first makes the
/// interleaving likely.
///
/// Must happen: the exec's destruction returns (within 20 s) and the
/// closure's calls succeeded. On failure the hung threads and the execs are
/// leaked.
#[test]
#[ignore = "open hole: a host closure's CUDA call can deadlock with another thread's cuGraphExecDestroy (seen with an exec holding an IF node); runs with CUDA_GRAPH_RUN_OPEN_HOLES=1"]
fn a_host_closure_calling_cuda_survives_a_concurrent_exec_destruction() {
    if std::env::var("CUDA_GRAPH_RUN_OPEN_HOLES").is_err() {
        return;
    }
    let ctx = own_context();
    let (set, mark) = (
        kernels::SetCondition::load(&ctx).unwrap(),
        kernels::Mark::load(&ctx).unwrap(),
    );
    let stream = ctx.new_stream().unwrap();
    let other = ctx.new_stream().unwrap();
    let side = ctx.new_stream().unwrap();
    let read: Arc<Mutex<Option<Vec<f32>>>> = Arc::default();
    let (done, finished) = std::sync::mpsc::channel();
    {
        let (ctx, read) = (ctx.clone(), read.clone());
        // Not joined: if it deadlocks, it stays blocked (and leaks).
        std::thread::spawn(move || {
            let mut g = Graph::new(&ctx).unwrap();
            g.add_host(
                "sleep_then_cuda",
                move || {
                    std::thread::sleep(Duration::from_millis(300));
                    let fresh = side.clone_htod(&[42.0f32]).unwrap();
                    *read.lock().unwrap() = side.clone_dtoh(&fresh).ok();
                },
                &[],
            )
            .unwrap();
            let mut exec = g.instantiate().unwrap();
            exec.launch(&stream).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            // The closure is asleep inside the callback: run and destroy an
            // exec with an IF node.
            let mut visits = other.alloc_zeros::<i32>(1).unwrap();
            {
                let mut c = Graph::new(&ctx).unwrap();
                let v = c.bind_mut(&mut visits);
                let h = c.cond_handle(None).unwrap();
                let one = LaunchConfig::new(1, 1);
                let s = c.add_kernel("set", &set, one, (h, 1), &[]).unwrap();
                c.add_if("if", h, &[s.node()], |body| {
                    body.add_kernel("mark", &mark, one, (v, 0), &[]).map(drop)
                })
                .unwrap();
                let mut conditional = c.instantiate().unwrap();
                conditional.launch(&other).unwrap();
            }
            ctx.synchronize().unwrap();
            let _ = done.send(other.clone_dtoh(&visits).ok());
        });
    }
    let visits = finished.recv_timeout(Duration::from_secs(20));
    assert!(
        visits.is_ok(),
        "deadlock: the host closure's CUDA call and the exec's destruction wait for each other"
    );
    assert_eq!(visits.unwrap(), Some(vec![1]));
    assert_eq!(read.lock().unwrap().as_deref(), Some(&[42.0][..]));
}
