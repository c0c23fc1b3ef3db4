//! Kernel declarations: CUDA C, PTX, a cudarc function; compile errors.

use graph_runtime::kernel::KernelDef;

use crate::common::{gpu, sync};
use graph_runtime::error::ArgumentRefusal;
use graph_runtime::kernel::{KernelDecl, Len, Out};
use graph_runtime::{cudarc, Graph, GraphError, Kernel, LaunchConfig};

const N: u32 = 256;

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_compile_error_carries_the_nvrtc_log() {
    let ctx = gpu();
    // SAFETY: never launched (it does not compile).
    static BROKEN: KernelDecl<(Out<f32>, Len)> = unsafe {
        KernelDecl::cuda_c(
            "extern \"C\" __global__ void broken(float* x, unsigned n) { x[0] = undeclared; }",
            "broken",
        )
    };
    let err = BROKEN.load(&ctx).unwrap_err();
    match &err {
        GraphError::Compile { kernel, log, .. } => {
            assert_eq!(kernel, "broken");
            assert!(log.contains("undeclared"), "{log}");
        }
        other => panic!("expected a compile error, got {other}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn kernels_declared_from_ptx_and_from_a_cudarc_function() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let ptx = cudarc::nvrtc::compile_ptx(kernels::ELEMENTWISE_SOURCE)
        .unwrap()
        .to_src();
    let ptx: &'static str = Box::leak(ptx.into_boxed_str());
    // SAFETY: `add_one(float*, unsigned)` from the same source.
    let from_ptx: KernelDecl<(Out<f32>, Len)> = unsafe { KernelDecl::ptx(ptx, "add_one") };
    let add_one_ptx = from_ptx.load(&ctx).unwrap();
    let module = ctx.load_module(cudarc::nvrtc::Ptx::from_src(ptx)).unwrap();
    // SAFETY: as above.
    let add_one_fn: Kernel<(Out<f32>, Len)> =
        unsafe { Kernel::from_function(module.load_function("add_one").unwrap(), "add_one") };
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        let cfg = LaunchConfig::for_elements(N, 128);
        let a = g
            .add_kernel("ptx", &add_one_ptx, cfg, (xb, N), &[])
            .unwrap();
        g.add_kernel("function", &add_one_fn, cfg, (xb, N), &[a.node()])
            .unwrap();
        g.instantiate().unwrap().launch(&stream).unwrap();
        sync(&stream);
    }
    assert!(stream.clone_dtoh(&x).unwrap().iter().all(|v| *v == 2.0));
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn bad_input_is_rejected_before_the_driver() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let add_one = kernels::AddOne::load(&ctx).unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let y = stream.alloc_zeros::<f32>(N as usize + 1).unwrap();
    let mut g = Graph::new(&ctx).unwrap();
    let (xb, yb) = (g.bind_mut(&mut x), g.bind(&y));
    let err = g
        .add_kernel(
            "zero_grid",
            &add_one,
            LaunchConfig::new(0, 32),
            (xb, N),
            &[],
        )
        .unwrap_err();
    assert!(
        matches!(&err, GraphError::InvalidArguments {
            label,
            reason: ArgumentRefusal::ZeroGrid { x: 0, y: 1, z: 1 },
        } if label == "zero_grid"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "node `zero_grid`: grid 0x1x1 has a zero dimension"
    );
    let err = g.add_copy("mismatch", yb, xb, &[]).unwrap_err();
    assert!(
        matches!(&err, GraphError::InvalidArguments {
            label,
            reason: ArgumentRefusal::CopyLengths {
                elements: 257,
                destination: 256
            },
        } if label == "mismatch"),
        "{err:?}"
    );
    let err = g
        .add_copy("read_only", xb, yb.slice(0..N as usize), &[])
        .unwrap_err();
    assert!(
        matches!(&err, GraphError::ReadOnlyWrite { label } if label == "read_only"),
        "{err:?}"
    );
    let mut other = Graph::new(&ctx).unwrap();
    let err = other
        .add_kernel("foreign", &add_one, LaunchConfig::new(1, 32), (xb, N), &[])
        .unwrap_err();
    assert!(matches!(err, GraphError::ForeignHandle { .. }), "{err}");
    assert_eq!(g.node_count(), 0, "nothing was half-built");
}

/// The C struct `affine` takes by value (24 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, graph_runtime::bytemuck::Pod, graph_runtime::bytemuck::Zeroable)]
struct Affine {
    scale: f32,
    offset: f32,
    count: u64,
    bias: [f32; 2],
}

const AFFINE_SOURCE: &str = r#"
struct Affine { float scale; float offset; unsigned long long count; float bias[2]; };
extern "C" __global__ void affine(float* x, Affine p, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * p.scale + p.offset + p.bias[0] + p.bias[1] + (float)p.count;
}"#;

graph_runtime::declare_kernel! {
    // SAFETY: matches `affine(float*, Affine, unsigned)` with Affine laid out
    // as the Rust struct; touches x below n (a Len).
    AffineKernel: (Out<f32>, graph_runtime::kernel::Val<Affine>, Len) = unsafe cuda_c(AFFINE_SOURCE, "affine");
}

/// A `#[repr(C)]` struct of 24 bytes passed by value, at build and through
/// an exec's argument update.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_struct_passed_by_value_reaches_the_kernel() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let kernel = AffineKernel::load(&ctx).unwrap();
    let mut x = stream.clone_htod(&vec![1.0f32; N as usize]).unwrap();
    let first = Affine {
        scale: 2.0,
        offset: 0.5,
        count: 3,
        bias: [0.25, 0.125],
    };
    {
        let mut g = Graph::new(&ctx).unwrap();
        let xb = g.bind_mut(&mut x);
        let node = g
            .add_kernel(
                "affine",
                &kernel,
                LaunchConfig::for_elements(N, 128),
                (xb, first, N),
                &[],
            )
            .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        // 1 * 2 + 0.5 + 0.25 + 0.125 + 3 = 5.875
        let second = Affine {
            scale: 1.0,
            offset: 0.0,
            count: 0,
            bias: [0.0, 1.0],
        };
        exec.set_kernel_args(&node, (xb, second, N)).unwrap();
        exec.launch(&stream).unwrap();
        sync(&stream);
    }
    let x = stream.clone_dtoh(&x).unwrap();
    assert!(x.iter().all(|v| *v == 6.875), "{:?}", &x[..4]);
}
