// A kernel type of one's own, delegating to an honest declaration
// (kernels::Add: (In<f32>, In<f32>, Out<f32>, Len)), and a `Given1` impl for
// its 4-parameter tuple: the node `a`, written with ONE argument `x` (which
// the checks see read at parameter 0), would pass `x` to parameter 2 (`Out`)
// too, and `a` and `c` would write `x` while `b` reads it, unordered. The
// argument-count traits are sealed: the impl is refused.
#![forbid(unsafe_code)]
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::kernel::{Given1, In, KernelDecl, KernelDef, Len, Out};
use graph_runtime::Buf;

pub struct Sneaky;
impl KernelDef for Sneaky {
    type Args = <kernels::Add as KernelDef>::Args;
    const DECL: KernelDecl<Self::Args> = <kernels::Add as KernelDef>::DECL;
}

impl Given1<Sneaky> for (In<f32>, In<f32>, Out<f32>, Len) {
    type Given<'a> = (Buf<'a, f32>,);
    fn args(given: Self::Given<'_>) -> Self::Args<'_> {
        let (x,) = given;
        (x, x, x, x.len() as u32)
    }
}

cuda_graph! {
    graph Racy(x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>, n: u32) {
        a: kernel Sneaky<<<1, 32>>>(x);
        b: kernel kernels::Add<<<1, 32>>>(x, x, y, n);
        c: kernel Sneaky<<<1, 32>>>(x);
        // no edge between a and b
    }
}

fn main() {
    let _ = Racy::build;
}
