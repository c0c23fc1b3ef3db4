use graph_runtime::cuda_graph;

cuda_graph! {
    graph Unset() {
        cond go;
        branch: if go { work: empty; }
        set: kernel kernels::SET<<<1, 1>>>(go);
        branch -> set;
    }
}

fn main() {}
