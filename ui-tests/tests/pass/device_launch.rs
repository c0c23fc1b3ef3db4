// A device-launchable graph (kernel, copy, fill and child graph nodes only),
// and a graph that launches it from a kernel.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    #[device_launch]
    pub graph Relaunch(x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>, n: u32) {
        zero: fill y = 0.0f32;
        step: kernel kernels::Add<<<1, 32>>>(x, x, y, n);
        back: copy y => x;
        zero -> step -> back;
    }

    graph Launcher(target: graph_runtime::DeviceExec<'a>) {
        go: kernel kernels::LaunchGraph<<<1, 1>>>(target, 0u32);
    }
}

fn main() {
    assert_eq!(Relaunch::LABELS, ["zero", "step", "back"]);
    assert!(Relaunch::OPTIONS.device_launch);
    assert_eq!(Launcher::LABELS, ["go"]);
}
