// A fill writes device memory: a host slice parameter or a `host` buffer
// as its destination is refused at the destination.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph FillHost(x_h: &mut [f32]) {
        host seen: f32[4];
        clear: fill x_h = 0.0f32;
        reset: fill seen = 1.0f32;
    }
}

fn main() {}
