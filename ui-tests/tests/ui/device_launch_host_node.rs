use graph_runtime::cuda_graph;

cuda_graph! {
    #[device_launch]
    graph OnDevice(x: &Vec<f32>) {
        k: kernel kernels::K<<<1, 32>>>(x);
        report: host || println!("done");
        k -> report;
    }
}

fn main() {}
