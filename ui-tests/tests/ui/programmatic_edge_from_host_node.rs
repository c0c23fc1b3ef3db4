use graph_runtime::cuda_graph;

cuda_graph! {
    graph Pdl() {
        report: host || println!("hi");
        k: kernel kernels::K<<<1, 32>>>();
        report -(programmatic)-> k;
    }
}

fn main() {}
