//! Captured work that forks across streams (`Capture::fork` / `join`):
//! views serve on the forked streams, and a fork left unjoined fails the
//! node, naming it, with every stream usable after.

use crate::common::{own_context, sync};
use graph_runtime::capture::captured;
use graph_runtime::cudarc::driver::{LaunchConfig as CudarcConfig, PushKernelArg};
use graph_runtime::kernel::KernelDef;
use graph_runtime::{Graph, GraphError, LaunchConfig};

const N: u32 = 1 << 16;

/// A memset on one forked stream and a kernel on another, joined back
/// before a kernel on the capture stream adds their results.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn captured_work_forks_across_streams_and_joins_back() {
    // Its own context: a capture disturbs context-wide calls of other tests.
    let ctx = own_context();
    let (stream, s1, s2) = (
        ctx.new_stream().unwrap(),
        ctx.new_stream().unwrap(),
        ctx.new_stream().unwrap(),
    );
    let (iota, add) = (
        kernels::Iota::load(&ctx).unwrap(),
        kernels::Add::load(&ctx).unwrap(),
    );
    let mut a = stream.clone_htod(&vec![5.0f32; N as usize]).unwrap();
    let mut b = stream.clone_htod(&vec![6.0f32; N as usize]).unwrap();
    let mut out = stream.alloc_zeros::<f32>(N as usize).unwrap();
    sync(&stream);
    {
        let mut g = Graph::new(&ctx).unwrap();
        let (ab, bb, ob) = (g.bind_mut(&mut a), g.bind_mut(&mut b), g.bind_mut(&mut out));
        let config = CudarcConfig::for_num_elems(N);
        // SAFETY: the work touches only the views' buffers, on streams in
        // the capture; iota(float* x, unsigned n) and add(const float* a,
        // const float* b, float* out, unsigned n) over the views' N elements.
        unsafe {
            g.add_capture("forked", &stream, &[], |cap| {
                cap.fork(&s1)?;
                cap.fork(&s2)?;
                s1.memset_zeros(&mut cap.write(ab))
                    .map_err(|e| captured("memset_zeros", e))?;
                let mut bv = cap.write(bb);
                s2.launch_builder(iota.function())
                    .arg(&mut bv)
                    .arg(&N)
                    .launch(config)
                    .map_err(|e| captured("iota", e))?;
                cap.join(&s1)?;
                cap.join(&s2)?;
                let (av, bv, mut ov) = (cap.read(ab), cap.read(bb), cap.write(ob));
                cap.stream()
                    .launch_builder(add.function())
                    .arg(&av)
                    .arg(&bv)
                    .arg(&mut ov)
                    .arg(&N)
                    .launch(config)
                    .map(|_| ())
                    .map_err(|e| captured("add", e))
            })
        }
        .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
    }
    let out = stream.clone_dtoh(&out).unwrap();
    assert!(
        out.iter().enumerate().all(|(i, v)| *v == i as f32),
        "out = 0 + iota: {:?}",
        &out[..4]
    );
    assert!(stream.clone_dtoh(&a).unwrap().iter().all(|v| *v == 0.0));
}

/// A fork the work leaves open (it returns, or fails, without joining
/// it) is joined back by the runtime: the capture ends whole, the node is
/// added (or the work's error returned), and every stream runs work again.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn forks_left_open_are_joined_back() {
    let ctx = own_context();
    let (stream, s1) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let mut a = stream.clone_htod(&vec![5.0f32; N as usize]).unwrap();
    let add_one = kernels::AddOne::load(&ctx).unwrap();
    sync(&stream);
    {
        let mut g = Graph::new(&ctx).unwrap();
        let ab = g.bind_mut(&mut a);
        // The work fails after forking: its error comes back, and s1 is
        // out of the capture.
        // SAFETY: the work touches nothing.
        let err = unsafe {
            g.add_capture("failing", &stream, &[], |cap| {
                cap.fork(&s1)?;
                Err(graph_runtime::capture::failed("work", std::fmt::Error))
            })
        }
        .unwrap_err();
        assert!(
            matches!(&err, GraphError::CaptureWork { label: Some(label), .. } if label == "failing"),
            "{err}"
        );
        let mut probe = s1.alloc_zeros::<f32>(4).unwrap();
        s1.memset_zeros(&mut probe).unwrap();
        sync(&s1);
        // The work forks and returns without joining: the node is added.
        // SAFETY: the work touches only the view's buffer, on a forked stream.
        let zeroed = unsafe {
            g.add_capture("open_fork", &stream, &[], |cap| {
                cap.fork(&s1)?;
                s1.memset_zeros(&mut cap.write(ab))
                    .map_err(|e| captured("memset_zeros", e))
            })
        }
        .unwrap();
        g.add_kernel(
            "bump",
            &add_one,
            LaunchConfig::for_elements(N, 256),
            (ab, N),
            &[zeroed],
        )
        .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
        s1.memset_zeros(&mut probe).unwrap();
        sync(&s1);
    }
    assert!(stream.clone_dtoh(&a).unwrap().iter().all(|v| *v == 1.0));
}
