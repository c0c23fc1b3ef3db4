use graph_runtime::cuda_graph;

cuda_graph! {
    graph BodyAlloc() {
        cond go = 1;
        branch: if go {
            buf: alloc u8[16];
            done: free buf;
            buf -> done;
        }
    }
}

fn main() {}
