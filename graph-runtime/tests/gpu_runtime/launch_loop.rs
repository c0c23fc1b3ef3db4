//! The launch loop: launch, read a bound buffer, decide, write one, launch
//! again, all while the exec lives (`Exec::bound_mut`), with cudarc's event
//! tracking ordering the reads and writes on another stream.

use crate::common::{debug_count, gpu, sync};
use graph_runtime::kernel::KernelDef;
use graph_runtime::{Graph, GraphError, LaunchConfig};

const N: u32 = 4096;

/// Each launch adds 1 to every element; the host reads element 0 on
/// another stream after each launch (no synchronize: tracking orders it)
/// and stops at 7, then writes new input through the exec and launches
/// once more.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_launch_loop_reads_and_writes_bound_buffers_between_launches() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let reader = ctx.new_stream().unwrap();
    let add_one = kernels::AddOne::load(&ctx).unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        g.add_kernel(
            "bump",
            &add_one,
            LaunchConfig::for_elements(N, 256),
            (xb, N),
            &[],
        )
        .unwrap();
        let mut exec = g.instantiate().unwrap();
        let head = xb.slice(0..1);
        let mut launches = 0;
        loop {
            exec.launch(&stream).unwrap();
            launches += 1;
            let value = reader
                .clone_dtoh(&exec.bound_mut(head).unwrap().view())
                .unwrap()[0];
            assert_eq!(
                value, launches as f32,
                "the read saw every launch before it"
            );
            if value >= 7.0 {
                break;
            }
        }
        assert_eq!(launches, 7);
        // New input, written on the reader stream, then one more launch.
        {
            let mut bound = exec.bound_mut(xb).unwrap();
            assert_eq!(bound.len(), N as usize);
            reader
                .memcpy_htod(&vec![10.0f32; N as usize], &mut bound.view_mut())
                .unwrap();
        }
        exec.launch(&stream).unwrap();
        let all = reader
            .clone_dtoh(&exec.bound_mut(xb).unwrap().view())
            .unwrap();
        assert!(all.iter().all(|v| *v == 11.0), "{:?}", &all[..4]);
    }
    sync(&stream);
    assert!(stream.clone_dtoh(&x).unwrap().iter().all(|v| *v == 11.0));
}

/// Only slices the exec's graph bound with `bind_mut` are reachable: a
/// read-only binding (the caller still holds a shared reference to it), a
/// graph allocation and another graph's slice are refused.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn bound_mut_refuses_what_the_graph_did_not_bind_mutably() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let add = kernels::Add::load(&ctx).unwrap();
    let x = stream.clone_htod(&vec![1.0f32; N as usize]).unwrap();
    let mut y = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut z = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut g = Graph::new(&ctx).unwrap();
    let (xb, yb) = (g.bind(&x), g.bind_mut(&mut y));
    let cfg = LaunchConfig::for_elements(N, 256);
    g.add_kernel("sum", &add, cfg, (xb, xb, yb, N), &[])
        .unwrap();
    let mut other = Graph::new(&ctx).unwrap();
    let zb = other.bind_mut(&mut z);
    let mut exec = g.instantiate().unwrap();
    exec.launch(&stream).unwrap();
    assert!(matches!(
        exec.bound_mut(xb),
        Err(GraphError::ForeignHandle { .. })
    ));
    assert!(matches!(
        exec.bound_mut(zb),
        Err(GraphError::ForeignHandle { .. })
    ));
    let read = stream
        .clone_dtoh(&exec.bound_mut(yb).unwrap().view())
        .unwrap();
    assert!(read.iter().all(|v| *v == 2.0));
}

/// A slice lent out by one exec's `bound_mut` is lent out for every exec
/// that shares the graph's bindings (a clone's): their launches and loans
/// are refused, typed, until the `BoundMut` is dropped; nothing waits (a
/// launch on this thread used to wait forever). A child graph's launch is
/// refused the same way.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_lent_slice_refuses_launches_of_execs_that_share_it() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let add_one = kernels::AddOne::load(&ctx).unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        let cfg = LaunchConfig::for_elements(N, 256);
        g.add_kernel("bump", &add_one, cfg, (xb, N), &[]).unwrap();
        let clone = g.try_clone().unwrap();
        let mut parent = Graph::new(&ctx).unwrap();
        parent
            .add_child("inner", g.try_clone().unwrap(), &[])
            .unwrap();
        let (mut mine, mut theirs) = (g.instantiate().unwrap(), clone.instantiate().unwrap());
        let mut outer = parent.instantiate().unwrap();
        let lent = GraphError::BufferLent {
            operation: "launch",
        };
        {
            let mut bound = mine.bound_mut(xb).unwrap();
            stream
                .memcpy_htod(&vec![5.0f32; N as usize], &mut bound.view_mut())
                .unwrap();
            let refused = theirs.launch(&stream).unwrap_err();
            assert_eq!(refused.to_string(), lent.to_string());
            assert!(matches!(
                refused,
                GraphError::BufferLent {
                    operation: "launch"
                }
            ));
            assert!(matches!(
                outer.launch(&stream),
                Err(GraphError::BufferLent {
                    operation: "launch"
                })
            ));
            assert!(matches!(
                theirs.bound_mut(xb),
                Err(GraphError::BufferLent {
                    operation: "bound_mut"
                })
            ));
        }
        theirs.launch(&stream).unwrap();
        outer.launch(&stream).unwrap();
        mine.launch(&stream).unwrap();
        let all = stream
            .clone_dtoh(&mine.bound_mut(xb).unwrap().view())
            .unwrap();
        assert!(all.iter().all(|v| *v == 8.0), "{:?}", &all[..4]);
    }
    sync(&stream);
}

/// A loop that rebuilds its graph and updates the exec with it every
/// iteration (the graphs share the first's resources) keeps each kernel's
/// module once: 1,000 rebuilds of a graph of two kernels, alternating,
/// keep two, not 3,003 (each graph added a kernel to the shared list at
/// each change of kernel, for the life of the first graph). The values
/// read back count every launch.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_rebuild_loop_keeps_each_kernel_once() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let add_one = kernels::AddOne::load(&ctx).unwrap();
    let scale = kernels::Scale::load(&ctx).unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        let cfg = LaunchConfig::for_elements(N, 256);
        // Two kernels, alternating (so that no node follows one of its own
        // kernel): x + 1, times 1, + 1.
        macro_rules! add {
            ($g:expr) => {{
                let a = $g.add_kernel("bump", &add_one, cfg, (xb, N), &[]).unwrap();
                let s = $g
                    .add_kernel("keep", &scale, cfg, (xb, 1.0f32, N), &[a.node()])
                    .unwrap();
                $g.add_kernel("bump again", &add_one, cfg, (xb, N), &[s.node()])
                    .unwrap();
            }};
        }
        add!(g);
        let mut exec = g.instantiate().unwrap();
        for _ in 0..1000 {
            let mut rebuilt = g.new_sharing().unwrap();
            add!(rebuilt);
            exec.update(&rebuilt).unwrap();
            exec.launch(&stream).unwrap();
        }
        assert_eq!(debug_count(&g, "kernels"), 2, "{g:?}");
        assert_eq!(debug_count(&g, "bindings"), 1, "{g:?}");
        let all = stream
            .clone_dtoh(&exec.bound_mut(xb).unwrap().view())
            .unwrap();
        assert!(all.iter().all(|v| *v == 2000.0), "{:?}", &all[..4]);
    }
    sync(&stream);
}
