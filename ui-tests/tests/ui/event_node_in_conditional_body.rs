use graph_runtime::cuda_graph;

cuda_graph! {
    graph BodyEvent(ev: &u64) {
        cond again = 1;
        repeat: while again {
            step: kernel kernels::K<<<1, 1>>>(again);
            mark: record ev;
            step -> mark;
        }
    }
}

fn main() {}
