// Plain-data values passed by value: a `#[repr(C)]` struct deriving Pod, an
// array, and scalars of every width, checked against the declaration.
use graph_runtime::bytemuck::{Pod, Zeroable};
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::kernel::{Len, Out, Val};

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
// Through graph-runtime's re-export (no bytemuck dependency of one's own).
#[bytemuck(crate = "graph_runtime::bytemuck")]
pub struct Affine {
    scale: f32,
    offset: f32,
    count: u64,
    bias: [f32; 2],
}

const SOURCE: &str = r#"
struct Affine { float scale; float offset; unsigned long long count; float bias[2]; };
extern "C" __global__ void affine(float* x, Affine p, float extra[3], unsigned char tag,
                                  short half, long long wide, double d, unsigned n) {}"#;

graph_runtime::declare_kernel! {
    // SAFETY: matches the signature above; touches nothing.
    pub AffineKernel: (Out<f32>, Val<Affine>, [f32; 3], u8, i16, i64, f64, Len) = unsafe cuda_c(SOURCE, "affine");
}

cuda_graph! {
    graph Uses(x: &mut CudaSlice<f32>, p: Affine, n: u32) {
        k: kernel AffineKernel<<<1, 32>>>(x, p, [1.0f32, 2.0, 3.0], 7u8, -2i16, 1i64 << 40, 0.5f64, n);
    }
}

fn main() {
    assert_eq!(Uses::LABELS, ["k"]);
}
