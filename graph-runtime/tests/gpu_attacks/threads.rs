//! Class 4: one `CUgraph` from several threads.
//!
//! NVIDIA: graph objects are not internally synchronized. A `Graph` and its
//! `Exec`s are `Send`, and an exec's per-node calls pass the graph's node
//! handles to the driver, so the graph growing on one thread while its execs
//! are updated on others must be serialized by the runtime. These tests do
//! it many times; they must not crash, every call must succeed, and the
//! results must be exact.
//!
//! Moving a graph or an exec to a fresh thread (on which no CUDA context
//! was ever current) must not matter either: each call binds the graph's
//! context itself.
//!
//! (`KernelNode` holds a raw `CUfunction` and is neither `Send` nor `Sync`,
//! so per-node argument updates happen on the thread that built the node:
//! here the test's main thread; the other threads use `Node`s.)

use crate::common::{gpu, sync};
use graph_runtime::kernel::KernelDef;
use graph_runtime::{Graph, LaunchConfig, Node};

const N: u32 = 4096;
const ROUNDS: usize = 300;
const GROW: usize = 300;

/// Attack: graph G has a kernel `scale` and two execs. While one thread adds
/// `GROW` kernels (a chain of `y += 1`) and empty nodes to G, the main
/// thread sets `scale`'s factor in exec 1 and launches it (x2, then x0.5,
/// `ROUNDS` times), and a third thread toggles `scale` on and off in exec 2.
///
/// Must happen: no crash, every call succeeds; exec 1 leaves x at 1
/// (`ROUNDS` times 2 * 0.5), then exec 1 (factor 2) and exec 2 (factor 3)
/// make it 6; a new exec of the grown graph adds `GROW` to y and scales x by
/// its built factor 1.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_graph_grows_on_one_thread_while_its_execs_are_updated_on_others() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let (scale, add_one) = (
        kernels::Scale::load(&ctx).unwrap(),
        kernels::AddOne::load(&ctx).unwrap(),
    );
    let cfg = LaunchConfig::for_elements(N, 256);
    let mut x = stream.clone_htod(&vec![1.0f32; N as usize]).unwrap();
    let mut y = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let (xb, yb) = (g.bind_mut(&mut x), g.bind_mut(&mut y));
        let k = g
            .add_kernel("scale", &scale, cfg, (xb, 1.0, N), &[])
            .unwrap();
        let k_node: Node = k.node();
        let mut e1 = g.instantiate().unwrap();
        let mut e2 = g.instantiate().unwrap();
        let launches = ctx.new_stream().unwrap();
        std::thread::scope(|s| {
            let grower = s.spawn(|| {
                // A kernel node as the first call on a fresh thread crashes
                // the driver (see the ignored test below): an empty node
                // first, which binds the graph's context to this thread.
                g.add_empty("start", &[]).unwrap();
                let mut last: Option<Node> = None;
                for i in 0..GROW {
                    let deps: Vec<Node> = last.into_iter().collect();
                    let node = g
                        .add_kernel(&format!("grow{i}"), &add_one, cfg, (yb, N), &deps)
                        .unwrap();
                    if i % 8 == 0 {
                        g.add_empty(&format!("join{i}"), &[node.node()]).unwrap();
                    }
                    last = Some(node.node());
                }
            });
            let toggler = s.spawn(|| {
                for i in 0..ROUNDS {
                    e2.set_enabled(k_node, i % 2 == 1).unwrap();
                }
                e2.set_enabled(k_node, true).unwrap();
            });
            for _ in 0..ROUNDS {
                e1.set_kernel_args(&k, (xb, 2.0, N)).unwrap();
                e1.launch(&launches).unwrap();
                e1.set_kernel_args(&k, (xb, 0.5, N)).unwrap();
                e1.launch(&launches).unwrap();
            }
            grower.join().expect("the growing thread");
            toggler.join().expect("the toggling thread");
        });
        sync(&launches);
        e1.set_kernel_args(&k, (xb, 2.0, N)).unwrap();
        e1.launch(&stream).unwrap();
        e2.set_kernel_args(&k, (xb, 3.0, N)).unwrap();
        e2.launch(&stream).unwrap();
        let mut grown = g.instantiate().unwrap();
        grown.launch(&stream).unwrap();
        sync(&stream);
        assert_eq!(g.node_count(), 2 + GROW + GROW.div_ceil(8));
    }
    assert!(stream.clone_dtoh(&x).unwrap().iter().all(|v| *v == 6.0));
    assert!(stream
        .clone_dtoh(&y)
        .unwrap()
        .iter()
        .all(|v| *v == GROW as f32));
}

/// Attack: each round, graph C (a child of parent P, sharing its buffers)
/// is instantiated, and then, at the same time, P takes C as a child graph
/// node on one thread (the driver clones C's `CUgraph`) while the main
/// thread updates C's exec node by node (the driver reads C's node handles).
///
/// Must happen: no crash, every call succeeds; C's exec, launched after
/// each round with its last factor (2), doubles x each round; P, launched at
/// the end, runs every child once (each adds 1 to y).
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_child_graph_is_cloned_while_its_exec_is_updated_on_another_thread() {
    const CHILDREN: usize = 40;
    const UPDATES: usize = 200;
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let (scale, add_one) = (
        kernels::Scale::load(&ctx).unwrap(),
        kernels::AddOne::load(&ctx).unwrap(),
    );
    let cfg = LaunchConfig::for_elements(N, 256);
    let mut x = stream.clone_htod(&vec![1.0f32; N as usize]).unwrap();
    let mut y = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut parent = Graph::new(&ctx).unwrap();
        let (xb, yb) = (parent.bind_mut(&mut x), parent.bind_mut(&mut y));
        let mut last: Option<Node> = None;
        for round in 0..CHILDREN {
            let mut child = parent.child_graph().unwrap();
            let bump = child
                .add_kernel("child_bump", &add_one, cfg, (yb, N), &[])
                .unwrap();
            let k = child
                .add_kernel("child_scale", &scale, cfg, (xb, 1.0, N), &[bump.node()])
                .unwrap();
            let mut exec = child.instantiate().unwrap();
            let deps: Vec<Node> = last.into_iter().collect();
            let parent = &mut parent;
            let added = std::thread::scope(|s| {
                let adder =
                    s.spawn(move || parent.add_child(&format!("child{round}"), child, &deps));
                for i in 0..UPDATES {
                    let factor = if i + 1 == UPDATES { 2.0 } else { i as f32 };
                    exec.set_kernel_args(&k, (xb, factor, N)).unwrap();
                }
                adder.join().expect("the adding thread")
            });
            last = Some(added.unwrap());
            // The child's exec bumps y as well (counted below).
            exec.launch(&stream).unwrap();
        }
        let mut exec = parent.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        sync(&stream);
    }
    // Each child's exec doubled x once; the parent's launch scaled x by 1 per child.
    let expected = 2.0f32.powi(CHILDREN as i32);
    assert!(stream
        .clone_dtoh(&x)
        .unwrap()
        .iter()
        .all(|v| *v == expected));
    // y: once per child exec launch, once per child node of the parent.
    let bumps = 2.0 * CHILDREN as f32;
    assert!(stream.clone_dtoh(&y).unwrap().iter().all(|v| *v == bumps));
}

/// Attack (still open; ignored until the runtime handles it): move a
/// `Graph` (which is `Send`) to a fresh thread, on which no CUDA context was
/// ever current, and add a kernel node there as the first CUDA call. The
/// runtime skips binding the context for kernel nodes and relies on the
/// driver answering `CUDA_ERROR_INVALID_CONTEXT`; on a thread that never had
/// a context the driver (580.x, H200) dereferences it instead and the
/// process dies of SIGSEGV inside `cuGraphAddNode`.
///
/// Must happen: the node is added (the runtime binds the graph's context
/// first, or the add is refused with an error) and the graph computes
/// `x = i`.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_kernel_node_added_first_on_a_fresh_thread() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let iota = kernels::Iota::load(&ctx).unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        let added = std::thread::scope(|s| {
            s.spawn(|| {
                g.add_kernel(
                    "first_on_thread",
                    &iota,
                    LaunchConfig::for_elements(N, 256),
                    (xb, N),
                    &[],
                )
                .map(|node| node.node())
            })
            .join()
            .expect("the adding thread")
        });
        added.unwrap();
        g.instantiate().unwrap().launch(&stream).unwrap();
        sync(&stream);
    }
    assert_eq!(stream.clone_dtoh(&x).unwrap(), crate::iota_times(N, 1.0));
}

/// Runs `f` on a fresh thread (on which no CUDA context was ever current)
/// and returns its result.
fn on_a_fresh_thread<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|s| s.spawn(f).join().expect("the fresh thread"))
}

/// Attack: move a graph and its exec from thread to thread, making each
/// call the first CUDA call of a fresh thread: add a host node and an empty
/// node, instantiate, enable a node, launch, and drop the exec and the graph
/// there. (Kernel nodes are covered by the ignored test above; the typed
/// `KernelNode` is not `Send`, so argument updates and priorities stay on
/// the thread that built the node.)
///
/// Must happen: every call succeeds (each binds the graph's context itself),
/// the host node runs once and the launch computes x = 3 * i.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn graph_and_exec_calls_work_as_the_first_call_on_fresh_threads() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let (iota, scale) = (
        kernels::Iota::load(&ctx).unwrap(),
        kernels::Scale::load(&ctx).unwrap(),
    );
    let cfg = LaunchConfig::for_elements(N, 256);
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        let fill = g.add_kernel("iota", &iota, cfg, (xb, N), &[]).unwrap();
        let k = g
            .add_kernel("scale", &scale, cfg, (xb, 2.0, N), &[fill.node()])
            .unwrap();
        let k_node = k.node();
        let counter = calls.clone();
        let host = on_a_fresh_thread(|| {
            g.add_host(
                "count",
                move || {
                    counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                },
                &[k_node],
            )
        })
        .unwrap();
        on_a_fresh_thread(|| g.add_empty("join", &[host])).unwrap();
        let mut exec = {
            // `Graph` is not `Sync`: lend it exclusively.
            let g = &mut g;
            on_a_fresh_thread(move || g.instantiate()).unwrap()
        };
        exec.set_kernel_args(&k, (xb, 3.0, N)).unwrap();
        on_a_fresh_thread(|| exec.set_enabled(k_node, true)).unwrap();
        let launch_stream = stream.clone();
        on_a_fresh_thread(|| exec.launch(&launch_stream)).unwrap();
        on_a_fresh_thread(move || drop(exec));
        on_a_fresh_thread(move || drop(g));
    }
    sync(&stream);
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(stream.clone_dtoh(&x).unwrap(), crate::iota_times(N, 3.0));
}
