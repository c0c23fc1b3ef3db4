use crate::common::{gpu, sync};
use cudarc::driver::sys::CUgraphExecUpdateResult;
use cudarc::driver::CudaSlice;
use graph_runtime::kernel::KernelDef;
use graph_runtime::kernel::{In, Len, Out};
use graph_runtime::{
    cudarc, Graph, GraphError, InstantiateOptions, Kernel, LaunchConfig, UpdateOutcome,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const N: u32 = 2048;

type AddArgs = (In<f32>, In<f32>, Out<f32>, Len);

/// `nodes` kernels `y = x + x` in parallel.
fn build<'a>(
    ctx: &Arc<cudarc::driver::CudaContext>,
    add: &Kernel<AddArgs>,
    x: &'a CudaSlice<f32>,
    y: &'a mut CudaSlice<f32>,
    nodes: usize,
) -> Graph<'a> {
    let mut g = Graph::new(ctx).unwrap();
    let (xb, yb) = (g.bind(x), g.bind_mut(y));
    for i in 0..nodes {
        g.add_kernel(
            &format!("add{i}"),
            add,
            LaunchConfig::for_elements(N, 256),
            (xb, xb, yb, N),
            &[],
        )
        .unwrap();
    }
    g
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn whole_graph_update_and_topology_change() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let add = kernels::Add::load(&ctx).unwrap();
    let x = stream.clone_htod(&vec![1.5f32; N as usize]).unwrap();
    let mut y1 = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut y2 = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut y3 = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let outcome;
    {
        let first = build(&ctx, &add, &x, &mut y1, 1);
        let second = build(&ctx, &add, &x, &mut y2, 1);
        let changed = build(&ctx, &add, &x, &mut y3, 2);
        let mut exec = first.instantiate().unwrap();
        exec.update(&second).unwrap();
        exec.launch(&stream).unwrap();
        sync(&stream);
        let err = exec.update(&changed).unwrap_err();
        match &err {
            GraphError::Update { result, .. } => {
                assert_eq!(
                    *result,
                    CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED
                )
            }
            other => panic!("expected an update error, got {other}"),
        }
        assert!(err.to_string().contains("topology changed"), "{err}");
        outcome = exec
            .update_or_reinstantiate(&changed, &InstantiateOptions::default())
            .unwrap();
        exec.launch(&stream).unwrap();
        sync(&stream);
    }
    assert!(matches!(outcome, UpdateOutcome::Reinstantiated { .. }));
    assert!(
        stream.clone_dtoh(&y1).unwrap().iter().all(|v| *v == 0.0),
        "first graph's output untouched"
    );
    assert!(
        stream.clone_dtoh(&y2).unwrap().iter().all(|v| *v == 3.0),
        "updated exec wrote y2"
    );
    assert!(
        stream.clone_dtoh(&y3).unwrap().iter().all(|v| *v == 3.0),
        "re-instantiated exec wrote y3"
    );
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn per_node_argument_update_and_enable_disable() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let (scale, add_one) = (
        kernels::Scale::load(&ctx).unwrap(),
        kernels::AddOne::load(&ctx).unwrap(),
    );
    let mut x = stream.clone_htod(&vec![1.0f32; N as usize]).unwrap();
    let cfg = LaunchConfig::for_elements(N, 256);
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        let s = g
            .add_kernel("scale", &scale, cfg, (xb, 2.0, N), &[])
            .unwrap();
        let a = g
            .add_kernel("add_one", &add_one, cfg, (xb, N), &[s.node()])
            .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap(); // 1 * 2 + 1 = 3
        exec.set_kernel_args(&s, (xb, 5.0, N)).unwrap();
        exec.launch(&stream).unwrap(); // 3 * 5 + 1 = 16
        exec.set_enabled(a.node(), false).unwrap();
        exec.launch(&stream).unwrap(); // 16 * 5 = 80
        exec.set_enabled(a.node(), true).unwrap();
        exec.launch(&stream).unwrap(); // 80 * 5 + 1 = 401
        sync(&stream);
    }
    assert!(stream.clone_dtoh(&x).unwrap().iter().all(|v| *v == 401.0));
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn only_kernel_copy_and_fill_nodes_can_be_disabled() {
    let ctx = gpu();
    let mut g = Graph::new(&ctx).unwrap();
    let e = g.add_empty("join", &[]).unwrap();
    let mut exec = g.instantiate().unwrap();
    let err = exec.set_enabled(e, false).unwrap_err();
    assert!(
        matches!(
            &err,
            GraphError::NodeUpdateRefused {
                label,
                reason: graph_runtime::error::NodeUpdateRefusal::NotToggleable,
            } if label == "join"
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("node `join`"), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn instantiate_failure_names_the_node() {
    let ctx = gpu();
    let add_one = kernels::AddOne::load(&ctx).unwrap();
    let stream = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut g = Graph::new(&ctx).unwrap();
    let xb = g.bind_mut(&mut x);
    let k = g
        .add_kernel(
            "step",
            &add_one,
            LaunchConfig::for_elements(N, 256),
            (xb, N),
            &[],
        )
        .unwrap();
    g.add_host("report", || {}, &[k.node()]).unwrap();
    let options = InstantiateOptions::default().device_launch(true);
    let err = g.instantiate_with(&options).unwrap_err();
    match &err {
        GraphError::Instantiate { label, .. } => {
            assert_eq!(label.as_deref(), Some("report"), "{err}")
        }
        other => panic!("expected an instantiate error, got {other}"),
    }
    assert!(err.to_string().contains("at node `report`"), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn dot_clone_priority_and_labels() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let add_one = kernels::AddOne::load(&ctx).unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        let k = g
            .add_kernel(
                "first",
                &add_one,
                LaunchConfig::for_elements(N, 256),
                (xb, N),
                &[],
            )
            .unwrap();
        g.set_priority(&k, 1).unwrap();
        g.add_kernel(
            "second",
            &add_one,
            LaunchConfig::for_elements(N, 256),
            (xb, N),
            &[k.node()],
        )
        .unwrap();
        assert_eq!(g.labels(), ["first", "second"]);
        let dot = g.dot().unwrap();
        assert!(dot.starts_with("digraph"), "{dot}");
        let clone = g.try_clone().unwrap();
        assert_eq!(clone.labels(), ["first", "second"]);
        let options = InstantiateOptions::default()
            .use_node_priority(true)
            .upload(&stream);
        let mut exec = clone.instantiate_with(&options).unwrap();
        assert_eq!(exec.labels(), ["first", "second"]);
        exec.launch(&stream).unwrap();
        let mut original = g.instantiate().unwrap();
        // cuGraphClone does not say in which order it adds the nodes, and
        // the driver pairs nodes by that order in an update.
        assert!(
            matches!(original.update(&clone), Err(GraphError::Update { .. })),
            "an update from a clone"
        );
        original.upload(&stream).unwrap();
        original.launch(&stream).unwrap();
        sync(&stream);
    }
    assert!(stream.clone_dtoh(&x).unwrap().iter().all(|v| *v == 4.0));
}

struct Probe(Arc<AtomicUsize>);
impl Drop for Probe {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn user_object_destructor_runs_once_after_exec_and_work_are_gone() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let slow = kernels::SlowFill::load(&ctx).unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    let calls = Arc::new(AtomicUsize::new(0));
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        g.keep_alive(Probe(drops.clone())).unwrap();
        let k = g
            .add_kernel(
                "slow",
                &slow,
                LaunchConfig::new(1, 32),
                (xb, 1.0, N, 20_000_000),
                &[],
            )
            .unwrap();
        let (probe, counter) = (Probe(drops.clone()), calls.clone());
        g.add_host(
            "host",
            move || {
                let _ = &probe;
                counter.fetch_add(1, Ordering::SeqCst);
            },
            &[k.node()],
        )
        .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        drop(g);
        assert_eq!(
            drops.load(Ordering::SeqCst),
            0,
            "the exec still holds the objects"
        );
        drop(exec);
        sync(&stream);
    }
    // The driver runs destructors on its own thread shortly after the work.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while drops.load(Ordering::SeqCst) < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert_eq!(
        drops.load(Ordering::SeqCst),
        2,
        "both objects dropped exactly once"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(stream.clone_dtoh(&x).unwrap().iter().all(|v| *v == 1.0));
}
