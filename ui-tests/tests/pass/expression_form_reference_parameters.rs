// The expression form over slices the function was given by reference:
// `&y` (or `&*y`) of `y: &CudaSlice<f32>`, `&mut *x` of `x: &mut
// CudaSlice<f32>` (its binding is not `mut`), and `&mut w` of `mut w: &mut
// CudaSlice<f32>` bind them as `&y_owned` and `&mut x_owned` would.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::{CudaContext, CudaSlice};
use graph_runtime::kernel::{In, Len, Out};
use std::sync::Arc;

const SOURCE: &str = r#"extern "C" __global__ void copy(const float* x, float* y, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i]; }"#;

graph_runtime::declare_kernel! {
    // SAFETY: matches `copy(const float*, float*, unsigned)`; touches x[..n], y[..n].
    pub CopyV: (In<f32>, Out<f32>, Len) = unsafe cuda_c(SOURCE, "copy");
}

#[allow(dead_code)]
fn build(
    ctx: &Arc<CudaContext>,
    y: &CudaSlice<f32>,
    x: &mut CudaSlice<f32>,
    z: &mut CudaSlice<f32>,
    mut w: &mut CudaSlice<f32>,
) -> graph_runtime::Result<usize> {
    let graph = cuda_graph! {
        graph(ctx) {
            a: kernel CopyV<<<1, 256>>>(&y, &mut *x, 256u32);
            // A written slice, read here: `&z` of `z: &mut CudaSlice`.
            b: kernel CopyV<<<1, 256>>>(&z, &mut *x, 256u32);
            c: kernel CopyV<<<1, 256>>>(&*y, &mut w, 256u32);
            a -> b -> c;
        }
    }?;
    Ok(graph.node_count())
}

fn main() {}
