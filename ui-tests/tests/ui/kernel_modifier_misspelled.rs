// A misspelled modifier in a kernel declaration names the two there are,
// not macro_rules' "no rules expected".
use graph_runtime::kernel::{Len, Out};

const SOURCE: &str = r#"extern "C" __global__ void bump(float* x, unsigned n) { if (threadIdx.x < n) x[threadIdx.x] += 1.0f; }"#;

graph_runtime::declare_kernel! {
    // SAFETY: matches `bump(float*, unsigned)`; touches x[..n].
    pub Bump: (Out<f32>, Len) = unsafe no_alais cuda_c(SOURCE, "bump");
}

fn main() {}
