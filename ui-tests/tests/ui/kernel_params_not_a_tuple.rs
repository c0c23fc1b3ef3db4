// One kernel parameter is a tuple of one: `(Out<i32>,)`. Without the
// trailing comma it is not a parameter list.
use graph_runtime::kernel::Out;

const SOURCE: &str = r#"extern "C" __global__ void one(int* x) { x[0] = 1; }"#;

graph_runtime::declare_kernel! {
    // SAFETY: matches `one(int*)`.
    pub One: (Out<i32>) = unsafe cuda_c(SOURCE, "one");
}

fn main() {}
