use crate::common::{debug_count, gpu, sync};
use graph_runtime::kernel::KernelDef;
use graph_runtime::{Graph, InstantiateOptions, LaunchConfig};

const N: u32 = 1024;

fn device_launch() -> InstantiateOptions<'static> {
    InstantiateOptions::default().device_launch(true)
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn tail_fire_and_forget_and_sibling_launch_from_a_kernel() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let (add_one, launch) = (
        kernels::AddOne::load(&ctx).unwrap(),
        kernels::LaunchGraph::load(&ctx).unwrap(),
    );
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut device_graph = Graph::new(&ctx).unwrap();
        let xb = device_graph.bind_mut(&mut x);
        device_graph
            .add_kernel(
                "add_one",
                &add_one,
                LaunchConfig::for_elements(N, 256),
                (xb, N),
                &[],
            )
            .unwrap();
        let mut device_exec = device_graph.instantiate_with(&device_launch()).unwrap();
        device_exec.upload(&stream).unwrap();
        sync(&stream);
        let handle = device_exec.device_handle().unwrap();
        for mode in [0u32, 1, 2] {
            let mut launcher = Graph::new(&ctx).unwrap();
            launcher
                .add_kernel(
                    "launch",
                    &launch,
                    LaunchConfig::new(1, 1),
                    (handle, mode),
                    &[],
                )
                .unwrap();
            let mut exec = launcher.instantiate_with(&device_launch()).unwrap();
            exec.upload(&stream).unwrap();
            exec.launch(&stream).unwrap();
            sync(&stream);
        }
    }
    let x = stream.clone_dtoh(&x).unwrap();
    assert!(
        x.iter().all(|v| *v == 3.0),
        "tail, fire-and-forget and sibling launches: {:?}",
        &x[..4]
    );
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn self_relaunch_loop_of_1000_steps() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let step = kernels::RelaunchCountdown::load(&ctx).unwrap();
    let mut counter = stream.clone_htod(&[1000i32]).unwrap();
    let mut steps = stream.alloc_zeros::<i32>(1).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let (c, s) = (g.bind_mut(&mut counter), g.bind_mut(&mut steps));
        g.add_kernel("step", &step, LaunchConfig::new(1, 1), (c, s), &[])
            .unwrap();
        let mut exec = g.instantiate_with(&device_launch()).unwrap();
        exec.upload(&stream).unwrap();
        exec.launch(&stream).unwrap();
        sync(&stream);
    }
    assert_eq!(stream.clone_dtoh(&steps).unwrap(), [1000]);
    assert_eq!(stream.clone_dtoh(&counter).unwrap(), [0]);
}

/// Per-node updates that pass the same device exec again keep it once in
/// the launching graph's tracked targets (each update added another, and
/// every later launch tracked the whole list); the launches still run it.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn per_node_updates_with_one_device_exec_keep_it_once() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let (add_one, launch) = (
        kernels::AddOne::load(&ctx).unwrap(),
        kernels::LaunchGraph::load(&ctx).unwrap(),
    );
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut device_graph = Graph::new(&ctx).unwrap();
        let xb = device_graph.bind_mut(&mut x);
        let cfg = LaunchConfig::for_elements(N, 256);
        device_graph
            .add_kernel("add_one", &add_one, cfg, (xb, N), &[])
            .unwrap();
        let mut device_exec = device_graph.instantiate_with(&device_launch()).unwrap();
        device_exec.upload(&stream).unwrap();
        sync(&stream);
        let handle = device_exec.device_handle().unwrap();
        let mut launcher = Graph::new(&ctx).unwrap();
        let node = launcher
            .add_kernel("launch", &launch, LaunchConfig::new(1, 1), (handle, 0), &[])
            .unwrap();
        let mut exec = launcher.instantiate_with(&device_launch()).unwrap();
        exec.upload(&stream).unwrap();
        for _ in 0..100 {
            exec.set_kernel_args(&node, (handle, 0)).unwrap();
            exec.launch(&stream).unwrap();
            sync(&stream);
        }
        assert_eq!(debug_count(&launcher, "device_targets"), 1, "{launcher:?}");
    }
    let x = stream.clone_dtoh(&x).unwrap();
    assert!(x.iter().all(|v| *v == 100.0), "{:?}", &x[..4]);
}
