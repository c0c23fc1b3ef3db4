// Host memory is no kernel argument: a host slice parameter and a `host`
// buffer passed to kernels are each refused at the argument, with the copy
// that brings them to the device (and no race reported on them besides).
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph HostToKernel(x_h: &[f32], x: &mut CudaSlice<f32>, tiles: usize, n: u32) {
        host seen: f32[4];
        tile: for t in 0..tiles {
            bump: kernel kernels::AddOne<<<1, 32>>>(x_h, n);
        }
        look: kernel kernels::Scale<<<1, 32>>>(seen, 2.0f32, n);
        keep: kernel kernels::AddOne<<<1, 32>>>(x, n);
    }
}

fn main() {}
