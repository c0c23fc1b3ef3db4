//! `#[cfg]` on a named graph puts every generated item under it: a graph
//! compiled out leaves nothing behind (not even code naming a kernel that
//! does not exist), and one compiled in works as usual.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    #[cfg(any())]
    graph Missing(x: &mut CudaSlice<f32>) {
        k: kernel no_such_crate::NoSuchKernel<<<1, 32>>>(x);
    }

    /// Compiled in.
    #[cfg(all())]
    #[cfg_attr(all(), doc = "Documented when the predicate holds.", allow(dead_code))]
    graph Present(x: &mut CudaSlice<f32>, n: u32) {
        bump: kernel kernels::AddOne<<<1, 32>>>(x, n);
    }
}

// One name, one graph per configuration.
cuda_graph! {
    #[cfg(all())]
    graph PerConfig(x: &mut CudaSlice<f32>, n: u32) {
        bump: kernel kernels::AddOne<<<1, 32>>>(x, n);
    }

    #[cfg(not(all()))]
    graph PerConfig(x: &mut CudaSlice<f32>, n: u32) {
        other: kernel kernels::AddOne<<<1, 32>>>(x, n);
    }
}

fn main() {
    assert_eq!(Present::LABELS, ["bump"]);
    assert_eq!(PerConfig::LABELS, ["bump"]);
}
