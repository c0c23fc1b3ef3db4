//! The expression form (`cuda_graph! { graph(ctx) { .. } }`): a graph
//! built from variables in scope, owned or given by reference.

use crate::common::gpu;
use crate::N;
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use std::sync::Arc;

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn expression_form_builds_a_graph() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let x_h: Vec<f32> = vec![3.0; N as usize];
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let n = N;
    {
        let graph = cuda_graph! {
            graph(&ctx) {
                cond go = 1;
                load: copy &x_h => &mut x;
                twice: kernel kernels::Scale<<<n.div_ceil(256), 256>>>(&mut x, 2.0f32, n);
                branch: if go { more: kernel kernels::AddOne<<<n.div_ceil(256), 256>>>(&mut x, n); }
                load -> twice -> branch;
            }
        }
        .unwrap();
        assert_eq!(graph.labels(), ["load", "twice", "branch", "more"]);
        graph.instantiate().unwrap().launch(&stream).unwrap();
        stream.synchronize().unwrap();
    }
    assert!(stream.clone_dtoh(&x).unwrap().iter().all(|v| *v == 7.0));
}

/// The expression form in a function given its slices by reference:
/// `&y` of `y: &CudaSlice` and `&mut *x` of `x: &mut CudaSlice` bind them.
fn scale_into(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    y: &CudaSlice<f32>,
    x: &mut CudaSlice<f32>,
    n: u32,
) -> graph_runtime::Result<()> {
    let graph = cuda_graph! {
        graph(ctx) {
            load: copy &y => &mut *x;
            twice: kernel kernels::Scale<<<n.div_ceil(256), 256>>>(&mut *x, 2.0f32, n);
            load -> twice;
        }
    }?;
    graph.instantiate()?.launch(stream)
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn expression_form_binds_slices_given_by_reference() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let y = stream.clone_htod(&vec![5.0f32; N as usize]).unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    scale_into(&ctx, &stream, &y, &mut x, N).unwrap();
    assert!(stream.clone_dtoh(&x).unwrap().iter().all(|v| *v == 10.0));
}
