// A device-launchable graph: kernel, copy, fill and child graph nodes only.
use graph_runtime::cuda_graph;

cuda_graph! {
    #[device_launch]
    pub graph Relaunch(x: &Vec<f32>, y: &Vec<f32>) {
        zero: fill y = 0.0f32;
        step: kernel kernels::STEP<<<1, 32>>>(x, y);
        back: copy y => x;
        zero -> step -> back;
    }

    graph Second() {
        only: empty;
    }
}

fn main() {
    assert_eq!(Relaunch::LABELS, ["zero", "step", "back"]);
    assert_eq!(Second::LABELS, ["only"]);
}
