use graph_runtime::cuda_graph;

cuda_graph! {
    graph LateBody(n: usize) {
        cond again = 1;
        buf: alloc f32[n];
        done: free buf;
        repeat: while again {
            step: kernel kernels::K<<<1, 32>>>(buf, again);
        }
        buf -> done -> repeat;
    }
}

fn main() {}
