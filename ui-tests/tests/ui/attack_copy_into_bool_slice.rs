// A copy into host `bool`s: any device byte other than 0 or 1 would make
// an invalid `bool` on the host.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Flags(flags: &CudaSlice<bool>, out: &mut [bool]) {
        read_back: copy flags => out;
    }
}

fn main() {}
