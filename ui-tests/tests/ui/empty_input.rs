use graph_runtime::cuda_graph;

cuda_graph! {}

fn main() {}
