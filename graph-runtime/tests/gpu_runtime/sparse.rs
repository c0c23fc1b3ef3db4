//! Buffers of different lengths in one kernel: a CSR sparse matrix-vector
//! product whose declaration ties each buffer to its own count (`Count<C>`,
//! `InLen`, `OutLen`), in a graph and on a stream, and the lengths refused.

use crate::common::gpu;
use graph_runtime::error::{ArgumentRefusal, LaunchRefusal};
use graph_runtime::kernel::KernelDef;
use graph_runtime::{Graph, GraphError, LaunchConfig};

/// A CSR matrix of `n` rows and `m` columns, `k` values per row at
/// scattered columns, and what `y = A x` is on the host (fused
/// multiply-adds in the kernel's order).
struct Csr {
    n: u32,
    m: u32,
    offsets: Vec<u32>,
    cols: Vec<u32>,
    values: Vec<f32>,
    x: Vec<f32>,
}

impl Csr {
    fn new(n: u32, m: u32, k: u32) -> Csr {
        let mut offsets = vec![0u32];
        let (mut cols, mut values) = (Vec::new(), Vec::new());
        for row in 0..n {
            for j in 0..k {
                cols.push((row * 7 + j * 131) % m);
                values.push(((row + j) % 13) as f32 * 0.25 - 1.0);
            }
            offsets.push(cols.len() as u32);
        }
        let x = (0..m).map(|c| (c % 17) as f32 * 0.5).collect();
        Csr {
            n,
            m,
            offsets,
            cols,
            values,
            x,
        }
    }

    fn nnz(&self) -> u32 {
        self.cols.len() as u32
    }

    fn product(&self) -> Vec<f32> {
        (0..self.n as usize)
            .map(|row| {
                let (b, e) = (self.offsets[row] as usize, self.offsets[row + 1] as usize);
                (b..e).fold(0.0f32, |sum, j| {
                    self.values[j].mul_add(self.x[self.cols[j] as usize], sum)
                })
            })
            .collect()
    }
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_csr_product_matches_the_host_in_a_graph_and_on_a_stream() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let spmv = kernels::CsrSpmv::load(&ctx).unwrap();
    let a = Csr::new(10_000, 7_000, 9);
    let (offsets, cols, values, x) = (
        stream.clone_htod(&a.offsets).unwrap(),
        stream.clone_htod(&a.cols).unwrap(),
        stream.clone_htod(&a.values).unwrap(),
        stream.clone_htod(&a.x).unwrap(),
    );
    let mut y_graph = stream.alloc_zeros::<f32>(a.n as usize).unwrap();
    let mut y_stream = stream.alloc_zeros::<f32>(a.n as usize).unwrap();
    let config = LaunchConfig::for_elements(a.n, 128);
    let counts = (a.n, a.nnz(), a.m);
    {
        let mut g = Graph::new(&ctx).unwrap();
        let args = (
            g.bind(&offsets),
            g.bind(&cols),
            g.bind(&values),
            g.bind(&x),
            g.bind_mut(&mut y_graph),
            counts.0,
            counts.1,
            counts.2,
        );
        g.add_kernel("spmv", &spmv, config, args, &[]).unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
    }
    let mut launch = spmv.on(&stream);
    let args = (
        launch.bind(&offsets),
        launch.bind(&cols),
        launch.bind(&values),
        launch.bind(&x),
        launch.bind_mut(&mut y_stream),
        counts.0,
        counts.1,
        counts.2,
    );
    launch.launch(config, args).unwrap();
    let expected = a.product();
    assert_eq!(stream.clone_dtoh(&y_graph).unwrap(), expected);
    assert_eq!(stream.clone_dtoh(&y_stream).unwrap(), expected);
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn buffers_shorter_than_their_counts_are_refused() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let spmv = kernels::CsrSpmv::load(&ctx).unwrap();
    let a = Csr::new(100, 50, 3);
    let (nnz, n, m) = (a.nnz() as usize, a.n as usize, a.m as usize);
    let offsets = stream.clone_htod(&a.offsets).unwrap();
    let short_offsets = stream.clone_htod(&a.offsets[..n]).unwrap(); // n, not n + 1
    let cols = stream.clone_htod(&a.cols).unwrap();
    let short_cols = stream.clone_htod(&a.cols[..nnz - 1]).unwrap();
    let values = stream.clone_htod(&a.values).unwrap();
    let x = stream.clone_htod(&a.x).unwrap();
    let short_x = stream.clone_htod(&a.x[..m - 1]).unwrap();
    let mut y = stream.alloc_zeros::<f32>(n).unwrap();
    let config = LaunchConfig::for_elements(a.n, 128);
    let counts = (a.n, a.nnz(), a.m);
    // A too-short column-index buffer, on a stream.
    let mut launch = spmv.on(&stream);
    let args = (
        launch.bind(&offsets),
        launch.bind(&short_cols),
        launch.bind(&values),
        launch.bind(&x),
        launch.bind_mut(&mut y),
        counts.0,
        counts.1,
        counts.2,
    );
    match launch.launch(config, args) {
        Err(GraphError::LaunchRefused {
            reason: LaunchRefusal::Arguments(reason),
            ..
        }) => {
            assert_eq!(
                reason,
                ArgumentRefusal::CountPastBuffer {
                    argument: 6,
                    count: nnz as u64,
                    buffer: 1,
                    elements: nnz as u64 - 1,
                    plus: 0
                }
            );
            assert_eq!(
                reason.to_string(),
                format!(
                    "count argument 6 is {nnz} but buffer argument 1 has {} elements, and the kernel touches {nnz} of them",
                    nnz - 1
                )
            );
        }
        other => panic!("expected LaunchRefused, got {other:?}"),
    }
    // Row offsets without their `+ 1`, and a short x, in a graph.
    let mut g = Graph::new(&ctx).unwrap();
    let yb = g.bind_mut(&mut y);
    let (o, so, c, v, xb, sx) = (
        g.bind(&offsets),
        g.bind(&short_offsets),
        g.bind(&cols),
        g.bind(&values),
        g.bind(&x),
        g.bind(&short_x),
    );
    let err = g
        .add_kernel(
            "spmv",
            &spmv,
            config,
            (so, c, v, xb, yb, counts.0, counts.1, counts.2),
            &[],
        )
        .unwrap_err();
    assert!(
        matches!(&err, GraphError::InvalidArguments { label, reason }
        if label == "spmv" && *reason == ArgumentRefusal::CountPastBuffer {
            argument: 5,
            count: n as u64,
            buffer: 0,
            elements: n as u64,
            plus: 1,
        }),
        "{err:?}"
    );
    let err = g
        .add_kernel(
            "spmv",
            &spmv,
            config,
            (o, c, v, sx, yb, counts.0, counts.1, counts.2),
            &[],
        )
        .unwrap_err();
    assert!(
        matches!(&err, GraphError::InvalidArguments { reason, .. }
        if *reason == ArgumentRefusal::CountPastBuffer {
            argument: 7,
            count: m as u64,
            buffer: 3,
            elements: m as u64 - 1,
            plus: 0,
        }),
        "{err:?}"
    );
    // The right lengths pass, and nothing above ran: y is still zero.
    g.add_kernel(
        "spmv",
        &spmv,
        config,
        (o, c, v, xb, yb, counts.0, counts.1, counts.2),
        &[],
    )
    .unwrap();
    drop(g);
    assert!(stream.clone_dtoh(&y).unwrap().iter().all(|v| *v == 0.0));
}

/// The matrix passed by value as a struct of buffers and counts
/// (`kernels::Csr`, a `kernel_struct!`): the same product, and a short
/// field refused as a separate argument would be.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_struct_of_buffers_is_a_kernel_argument() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let spmv = kernels::CsrSpmvStruct::load(&ctx).unwrap();
    let a = Csr::new(5_000, 3_000, 7);
    let (offsets, cols, values, x) = (
        stream.clone_htod(&a.offsets).unwrap(),
        stream.clone_htod(&a.cols).unwrap(),
        stream.clone_htod(&a.values).unwrap(),
        stream.clone_htod(&a.x).unwrap(),
    );
    let short_cols = stream.clone_htod(&a.cols[..a.cols.len() - 1]).unwrap();
    let mut y = stream.alloc_zeros::<f32>(a.n as usize).unwrap();
    let config = LaunchConfig::for_elements(a.n, 128);
    {
        let mut g = Graph::new(&ctx).unwrap();
        let matrix = kernels::Csr {
            offsets: g.bind(&offsets),
            cols: g.bind(&cols),
            values: g.bind(&values),
            n: a.n,
            nnz: a.nnz(),
        };
        let (xb, yb) = (g.bind(&x), g.bind_mut(&mut y));
        let short = kernels::Csr {
            cols: g.bind(&short_cols),
            ..matrix
        };
        let err = g
            .add_kernel("short", &spmv, config, (short, xb, yb, a.m), &[])
            .unwrap_err();
        assert!(
            matches!(&err, GraphError::InvalidArguments { label, reason } if label == "short"
            && *reason == ArgumentRefusal::CountPastBuffer {
                argument: 0,
                count: a.nnz().into(),
                buffer: 0,
                elements: (a.nnz() - 1).into(),
                plus: 0,
            }),
            "{err:?}"
        );
        g.add_kernel("spmv", &spmv, config, (matrix, xb, yb, a.m), &[])
            .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
    }
    assert_eq!(stream.clone_dtoh(&y).unwrap(), a.product());
}

/// The product is declared `no_alias`: the same buffer as x and y (a
/// thread would write y[row] while others read x[c]) is refused, in a
/// graph and in a per-node update.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn an_output_overlapping_an_input_is_refused() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let spmv = kernels::CsrSpmv::load(&ctx).unwrap();
    assert!(spmv.is_no_alias());
    let a = Csr::new(64, 64, 3);
    let (offsets, cols, values) = (
        stream.clone_htod(&a.offsets).unwrap(),
        stream.clone_htod(&a.cols).unwrap(),
        stream.clone_htod(&a.values).unwrap(),
    );
    let mut v = stream.clone_htod(&a.x).unwrap();
    let mut y = stream.alloc_zeros::<f32>(64).unwrap();
    let config = LaunchConfig::for_elements(64, 64);
    let mut g = Graph::new(&ctx).unwrap();
    let (o, c, val) = (g.bind(&offsets), g.bind(&cols), g.bind(&values));
    let (vb, yb) = (g.bind_mut(&mut v), g.bind_mut(&mut y));
    let err = g
        .add_kernel(
            "aliased",
            &spmv,
            config,
            (o, c, val, vb, vb, 64, a.nnz(), 64),
            &[],
        )
        .unwrap_err();
    assert!(
        matches!(&err, GraphError::InvalidArguments { label, reason: ArgumentRefusal::OverlapUnderNoAlias } if label == "aliased"),
        "{err}"
    );
    // v as x and y apart: accepted.
    let node = g
        .add_kernel(
            "apart",
            &spmv,
            config,
            (o, c, val, vb, yb, 64, a.nnz(), 64),
            &[],
        )
        .unwrap();
    let mut exec = g.instantiate().unwrap();
    let err = exec
        .set_kernel_args(&node, (o, c, val, yb, yb.slice(0..64), 64, a.nnz(), 64))
        .unwrap_err();
    assert!(
        matches!(&err, GraphError::InvalidArguments { label, reason: ArgumentRefusal::OverlapUnderNoAlias } if label == "apart"),
        "{err:?}"
    );
    exec.launch(&stream).unwrap();
    exec.synchronize().unwrap();
    drop(exec);
    drop(g);
    assert_eq!(stream.clone_dtoh(&y).unwrap(), a.product());
}
