// A struct parameter's field declared raw (`r#dst`) is the literal's
// `dst`: its write is seen, and two kernels writing through it race.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::kernel::{In, Len, Out};

const SOURCE: &str = r#"
struct Pair { const float* src; float* dst; unsigned n; };
extern "C" __global__ void copy_pair(Pair p) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) p.dst[i] = p.src[i];
}"#;

graph_runtime::kernel_struct! {
    /// `struct Pair { const float* src; float* dst; unsigned n; }`
    pub struct Pair {
        src: In<f32>,
        r#dst: Out<f32>,
        n: Len,
    }
}

graph_runtime::declare_kernel! {
    // SAFETY: matches `copy_pair(Pair p)`; touches src and dst below n.
    pub CopyPair: (Pair<'static>,) = unsafe cuda_c(SOURCE, "copy_pair");
}

cuda_graph! {
    graph Copies(a: &CudaSlice<f32>, b: &mut CudaSlice<f32>, n: u32) {
        one: kernel CopyPair<<<1, 32>>>(Pair { src: a, dst: b, n });
        two: kernel CopyPair<<<1, 32>>>(Pair { src: a, dst: b, n });
    }
}

fn main() {}
