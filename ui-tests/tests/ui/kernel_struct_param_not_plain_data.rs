// A struct passed by value must be plain data (Pod): one holding a `Vec`
// (a pointer the kernel would see as bytes) is refused.
use graph_runtime::kernel::{Out, Val};

struct Settings {
    weights: Vec<f32>,
}

const SOURCE: &str = r#"extern "C" __global__ void use_settings(float* x) { x[0] = 1.0f; }"#;

graph_runtime::declare_kernel! {
    // SAFETY: a false promise: the layouts cannot match.
    pub UseSettings: (Out<f32>, Val<Settings>) = unsafe cuda_c(SOURCE, "use_settings");
}

fn main() {}
