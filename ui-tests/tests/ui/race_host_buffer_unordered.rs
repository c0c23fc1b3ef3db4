// A copy writes a host buffer while a host node reads it, unordered: a
// data race, as on a device buffer.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Racy(x: &CudaSlice<f32>, n: u32) {
        host seen: f32[n];
        down: copy x => seen;
        look: host |seen: &[f32]| println!("{}", seen[0]);
    }
}

fn main() {}

cuda_graph! {
    graph NotDisjoint(x: &CudaSlice<f32>, n: u32) {
        host seen: f32[n];
        #[disjoint(seen)]
        down: copy x => seen;
        #[disjoint]
        look: host |seen: &[f32]| println!("{}", seen[0]);
    }
}
