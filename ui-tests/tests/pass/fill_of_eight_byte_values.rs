// Fills of 8-byte values: zero (a memset of 4-byte words) and any other
// value (the runtime's fill kernel), at top level and in a conditional body.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Fills(x: &mut CudaSlice<f64>, y: &mut CudaSlice<u64>, z: &mut CudaSlice<i64>) {
        cond go = 1;
        zero: fill x = 0.0f64;
        ones: fill y = 0x0000_0001_0000_0002u64;
        maybe: if go { minus: fill z = -1i64; }
    }
}

fn main() {
    assert_eq!(Fills::LABELS, ["zero", "ones", "maybe", "minus"]);
}
