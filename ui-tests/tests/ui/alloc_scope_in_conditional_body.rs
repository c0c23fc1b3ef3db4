use graph_runtime::cuda_graph;

cuda_graph! {
    graph BodyScope() {
        cond go = 1;
        branch: if go {
            alloc buf: u8[16] {
                k: kernel kernels::K<<<1, 32>>>(buf);
            }
        }
    }
}

fn main() {}
