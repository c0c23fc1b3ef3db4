// A kernel declaration without `unsafe`: the promise it makes must be
// written, with its reason.
use graph_runtime::kernel::{Len, Out};

const SOURCE: &str = r#"extern "C" __global__ void bump(float* x, unsigned n) { if (threadIdx.x < n) x[threadIdx.x] += 1.0f; }"#;

graph_runtime::declare_kernel! {
    pub Bump: (Out<f32>, Len) = cuda_c(SOURCE, "bump");
}

fn main() {}
