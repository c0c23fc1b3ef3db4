// A kernel type named like the trait of the expansion's race check
// (`NoDataRace`): the check's trait is out of the user tokens' scope, so the
// name means the user's type (both nodes only read `x`: no race).
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::kernel::{KernelDecl, KernelDef};

#[derive(Debug)]
pub struct NoDataRace;
impl KernelDef for NoDataRace {
    type Args = <kernels::Add as KernelDef>::Args;
    const DECL: KernelDecl<Self::Args> = <kernels::Add as KernelDef>::DECL;
}

cuda_graph! {
    graph G(x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>, z: &mut CudaSlice<f32>, n: u32) {
        a: kernel NoDataRace<<<1, 32>>>(x, x, y, n);
        b: kernel kernels::Add<<<1, 32>>>(x, x, z, n);
    }
}

fn main() {}
