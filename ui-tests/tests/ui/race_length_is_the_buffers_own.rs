// `x.len()` in another node's operand is no use of `x`: `Buf`'s `len`
// takes `self`, so a trait's `len` cannot stand in for it and hand back
// the buffer; the fill below is a type error, not a hidden race.
use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::{cuda_graph, Buf};

pub trait Same {
    fn len(self) -> Self;
}

impl<'a> Same for Buf<'a, f32> {
    fn len(self) -> Self {
        self
    }
}

cuda_graph! {
    graph Hijack(x: &mut CudaSlice<f32>) {
        a: fill x = 0.0f32;
        b: fill x.len() = 1.0f32;
    }
}

fn main() {}
