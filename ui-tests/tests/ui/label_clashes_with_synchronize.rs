// Kernel, copy and fill labels become exec methods: one named like an
// existing method (`synchronize`, added with the launch loop) is refused at the label.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Clash(x: &mut CudaSlice<f32>, n: u32) {
        synchronize: kernel kernels::AddOne<<<1, 32>>>(x, n);
    }
}

fn main() {}
