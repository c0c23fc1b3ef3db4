//! GPU tests of graphs built by `cuda_graph!`: every construct, checked on
//! the device. Ignored unless asked for (`cargo test -- --include-ignored`).

use graph_runtime::cudarc::driver::{
    CudaEvent, CudaSlice, CudaStream, LaunchConfig as CudarcConfig, PushKernelArg,
};
use graph_runtime::kernel::KernelDef;
use graph_runtime::{cuda_graph, Escaped};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[path = "gpu_runtime/common.rs"]
#[allow(dead_code)]
mod common;
use common::gpu;

const N: u32 = 4096;

cuda_graph! {
    /// Copies both ways, fill, empty, events, host node, child graph, fan-out/in.
    graph Plumbing(x_h: &[f32], out_h: &mut [f32], x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>,
                   ev: &CudaEvent, calls: Arc<AtomicUsize>, child: graph_runtime::Graph<'a>, n: u32) {
        up:     copy x_h => x;
        zero:   fill y = 1.5f32;
        twice:  kernel kernels::Scale<<<n.div_ceil(256), 256>>>(x, 2.0f32, n);
        thrice: kernel kernels::Scale<<<n.div_ceil(256), 256>>>(y, 3.0f32, n);
        join:   empty;
        sub:    graph child;
        mark:   record ev;
        after:  wait ev;
        down:   copy x => out_h;
        count:  host move || { calls.fetch_add(1, Ordering::SeqCst); };
        up -> twice;
        zero -> thrice;
        [twice, thrice] -> join -> sub -> mark -> after -> down -> count;
    }

    /// Nested alloc scopes, a statement allocation with an escape.
    graph Scopes(out: &mut CudaSlice<f32>, n: u32) {
        #[escape]
        kept: alloc f32[n];
        alloc outer: f32[n] {
            a: kernel kernels::Iota<<<n.div_ceil(256), 256>>>(outer, n);
            alloc inner: f32[n] {
                b: kernel kernels::Add<<<n.div_ceil(256), 256>>>(outer, outer, inner, n);
                c: copy inner => out;
                d: copy inner => kept;
                b -> [c, d];
            }
            a -> inner;
        }
        kept -> outer;
    }

    /// Nested conditionals: an IF inside a WHILE inside an IF/ELSE.
    graph Nested(counter: &mut CudaSlice<i32>, iterations: &mut CudaSlice<i32>, visits: &mut CudaSlice<i32>) {
        cond outer;
        decide: kernel kernels::SetCondition<<<1, 1>>>(outer, 1u32);
        branch: if outer {
            cond again = 1;
            repeat: while again {
                cond inner = 1;
                step: kernel kernels::Countdown<<<1, 1>>>(again, counter, iterations);
                visit: if inner { mark: kernel kernels::Mark<<<1, 1>>>(visits, 0u32); }
                step -> visit;
            }
        } else {
            never: kernel kernels::Mark<<<1, 1>>>(visits, 1u32);
        }
        decide -> branch;
    }

    /// Attributes: a disabled node, a priority, a programmatic edge. (A
    /// node after a programmatic edge cannot be disabled: `third` follows
    /// a full one; `LaunchOrderChain` has launch-order edges.)
    #[use_node_priority]
    graph Attributes(x: &mut CudaSlice<f32>, n: u32) {
        #[priority(1)]
        first: kernel kernels::AddOne<<<n.div_ceil(256), 256>>>(x, n);
        second: kernel kernels::PdlAddOne<<<n.div_ceil(256), 256>>>(x, n);
        #[disabled]
        third: kernel kernels::PdlAddOne<<<n.div_ceil(256), 256>>>(x, n);
        fourth: kernel kernels::Scale<<<n.div_ceil(256), 256>>>(x, 10.0f32, n);
        first -(programmatic)-> second -> third -> fourth;
    }

    /// Kernel nodes keep a failure and later nodes settle it: a build whose
    /// middle kernel (or a body's kernel) fails returns that failure.
    graph FailsMidway(x: &mut CudaSlice<f32>, out_h: &mut [f32], n: u32, blocks: u32, body_blocks: u32) {
        cond never = 0;
        before: kernel kernels::Scale<<<n.div_ceil(256), 256>>>(x, 2.0f32, n);
        middle: kernel kernels::Scale<<<blocks, 256>>>(x, 3.0f32, n);
        after:  kernel kernels::Scale<<<n.div_ceil(256), 256>>>(x, 5.0f32, n);
        down:   copy x => out_h;
        maybe:  if never {
            inner: kernel kernels::Scale<<<body_blocks, 256>>>(x, 7.0f32, n);
        }
        before -> middle -> after -> down -> maybe;
    }

    /// A prologue-heavy chain, every edge from the launch-order port.
    graph LaunchOrderChain(x: &mut CudaSlice<f32>, n: u32, work: u32) {
        s0: kernel kernels::PdlPrologueStep<<<n.div_ceil(256), 256>>>(x, n, work);
        s1: kernel kernels::PdlPrologueStep<<<n.div_ceil(256), 256>>>(x, n, work);
        s2: kernel kernels::PdlPrologueStep<<<n.div_ceil(256), 256>>>(x, n, work);
        s3: kernel kernels::PdlPrologueStep<<<n.div_ceil(256), 256>>>(x, n, work);
        #[launch_order]
        s0 -> s1 -> s2 -> s3;
    }

    /// The same chain with programmatic edges (triggered by `pdl_trigger()`).
    graph ProgrammaticChain(x: &mut CudaSlice<f32>, n: u32, work: u32) {
        s0: kernel kernels::PdlPrologueStep<<<n.div_ceil(256), 256>>>(x, n, work);
        s1: kernel kernels::PdlPrologueStep<<<n.div_ceil(256), 256>>>(x, n, work);
        s2: kernel kernels::PdlPrologueStep<<<n.div_ceil(256), 256>>>(x, n, work);
        s3: kernel kernels::PdlPrologueStep<<<n.div_ceil(256), 256>>>(x, n, work);
        s0 -(programmatic)-> s1 -(programmatic)-> s2 -(programmatic)-> s3;
    }

    /// The same chain with ordinary edges.
    graph OrdinaryChain(x: &mut CudaSlice<f32>, n: u32, work: u32) {
        s0: kernel kernels::PdlPrologueStep<<<n.div_ceil(256), 256>>>(x, n, work);
        s1: kernel kernels::PdlPrologueStep<<<n.div_ceil(256), 256>>>(x, n, work);
        s2: kernel kernels::PdlPrologueStep<<<n.div_ceil(256), 256>>>(x, n, work);
        s3: kernel kernels::PdlPrologueStep<<<n.div_ceil(256), 256>>>(x, n, work);
        s0 -> s1 -> s2 -> s3;
    }

    /// A WHILE whose handle a captured kernel sets: the capture names
    /// `again`, so it counts as the loop's setter.
    graph CapturedCountdown(stream: &Arc<CudaStream>, counter: &mut CudaSlice<i32>) {
        cond again = 1;
        spin: while again {
            // SAFETY: the captured kernel touches only the counter, through
            // its view, and sets only `again`.
            step: unsafe capture(stream) |s| {
                let step = kernels::CountdownStep::load(s.stream().context())?;
                let (handle, mut counter) = (again.raw(), s.write(counter));
                let config = CudarcConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
                // SAFETY: countdown_step(unsigned long long handle, int* counter).
                unsafe { s.stream().launch_builder(step.function()).arg(&handle).arg(&mut counter).launch(config) }
                    .map(|_| ())
                    .map_err(|e| graph_runtime::capture::captured("countdown_step", e))
            };
        }
    }

    /// Makes an allocation that escapes (the Programming Guide's producer).
    graph MakeData(n: u32) {
        #[escape]
        data: alloc f32[n];
        fill: kernel kernels::Iota<<<n.div_ceil(256), 256>>>(data, n);
        data -> fill;
    }

    /// Uses and frees an allocation another graph made.
    graph UseAndFree(data: Escaped<f32>, out: &mut CudaSlice<f32>, n: u32) {
        bump: kernel kernels::AddOne<<<n.div_ceil(256), 256>>>(data, n);
        copy: copy data => out;
        done: free data;
        bump -> copy -> done;
    }

    /// A child graph type built by the macro.
    graph Inner(x: &mut CudaSlice<f32>, n: u32) {
        bump: kernel kernels::AddOne<<<n.div_ceil(256), 256>>>(x, n);
    }
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn copies_fill_empty_events_host_and_child_graph() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let x_h: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let mut out_h = vec![0.0f32; N as usize];
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut y = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let mut c = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let ev = ctx.new_event(None).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    {
        let child = Inner::build(&ctx, &mut c, N).unwrap().into_graph();
        let g = Plumbing::build(
            &ctx,
            &x_h,
            &mut out_h,
            &mut x,
            &mut y,
            &ev,
            calls.clone(),
            child,
            N,
        )
        .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        exec.launch(&stream).unwrap();
        stream.synchronize().unwrap();
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(
        out_h.iter().enumerate().all(|(i, v)| *v == 2.0 * i as f32),
        "{:?}",
        &out_h[..4]
    );
    assert!(stream.clone_dtoh(&y).unwrap().iter().all(|v| *v == 4.5));
    assert!(
        stream.clone_dtoh(&c).unwrap().iter().all(|v| *v == 2.0),
        "child graph ran at each launch"
    );
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn alloc_scopes_and_escaping_allocation() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut out = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let escaped;
    {
        let g = Scopes::build(&ctx, &mut out, N).unwrap();
        let kept = g.bound().kept;
        let built = g.graph().allocation_address("inner");
        let mut exec = g.instantiate().unwrap();
        // Allocation addresses, by the alloc statement's name: fixed at
        // build, two live at once are distinct, a kernel has none.
        let (outer, inner) = (
            exec.exec().allocation_address("outer").unwrap(),
            exec.exec().allocation_address("inner").unwrap(),
        );
        assert_ne!(outer, inner);
        assert_eq!(built, Some(inner));
        assert_eq!(
            exec.exec().allocation_address("kept"),
            Some(kept.device_ptr())
        );
        assert_eq!(exec.exec().allocation_address("a"), None);
        exec.launch(&stream).unwrap();
        assert_eq!(exec.exec().allocation_address("outer"), Some(outer));
        // `kept` escaped the graph: taken from the exec, read to the host
        // (ordered after the launch), freed when dropped.
        escaped = exec.take_escaped(kept).unwrap().to_host().unwrap();
    }
    let out = stream.clone_dtoh(&out).unwrap();
    assert!(out.iter().enumerate().all(|(i, v)| *v == 2.0 * i as f32));
    assert_eq!(
        out, escaped,
        "the escaping allocation holds the same values"
    );
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_while_driven_by_a_captured_kernel() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut counter = stream.clone_htod(&[9i32]).unwrap();
    {
        let mut exec = CapturedCountdown::build(&ctx, &stream, &mut counter)
            .unwrap()
            .instantiate()
            .unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
    }
    assert_eq!(stream.clone_dtoh(&counter).unwrap(), [0]);
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn an_escaped_allocation_passes_to_a_graph_that_frees_it() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut out = stream.alloc_zeros::<f32>(N as usize).unwrap();
    let make = MakeData::build(&ctx, N).unwrap();
    let data = make.bound().data;
    let mut maker = make.instantiate().unwrap();
    maker.launch(&stream).unwrap();
    let escaped = maker.take_escaped(data).unwrap();
    {
        let consume = UseAndFree::build(&ctx, escaped, &mut out, N).unwrap();
        let mut consumer = consume.instantiate().unwrap();
        consumer.launch(&stream).unwrap();
        // The next round: the maker makes it again (same address), the
        // consumer uses and frees it again.
        maker.launch(&stream).unwrap();
        consumer.launch(&stream).unwrap();
        consumer.synchronize().unwrap();
    }
    let got = stream.clone_dtoh(&out).unwrap();
    assert!(
        got.iter().enumerate().all(|(i, v)| *v == i as f32 + 1.0),
        "{:?}",
        &got[..4]
    );
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn nested_conditionals() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut counter = stream.clone_htod(&[25i32]).unwrap();
    let mut iterations = stream.alloc_zeros::<i32>(1).unwrap();
    let mut visits = stream.alloc_zeros::<i32>(2).unwrap();
    Nested::build(&ctx, &mut counter, &mut iterations, &mut visits)
        .unwrap()
        .instantiate()
        .unwrap()
        .launch(&stream)
        .unwrap();
    assert_eq!(stream.clone_dtoh(&iterations).unwrap(), [25]);
    assert_eq!(stream.clone_dtoh(&visits).unwrap(), [25, 0]);
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn disabled_node_priority_and_programmatic_edges() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let g = Attributes::build(&ctx, &mut x, N).unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap(); // (0 + 1 + 1) * 10 = 20: `third` starts disabled
        exec.third().set_enabled(true).unwrap();
        exec.launch(&stream).unwrap(); // (20 + 3) * 10 = 230
        stream.synchronize().unwrap();
    }
    assert!(stream.clone_dtoh(&x).unwrap().iter().all(|v| *v == 230.0));
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn typed_accessors_rebuild_update_and_errors_name_labels() {
    let ctx = gpu();
    let stream: Arc<CudaStream> = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(N as usize).unwrap();
    {
        let g = Attributes::build(&ctx, &mut x, N).unwrap();
        let bound = g.bound();
        let mut exec = g.instantiate().unwrap();
        exec.fourth().set_args((bound.x, 2.0, N)).unwrap();
        exec.launch(&stream).unwrap(); // (0 + 2) * 2 = 4
        let again = g.rebuild(bound.x, N).unwrap();
        let outcome = exec.update(&again).unwrap();
        assert!(
            matches!(outcome, graph_runtime::UpdateOutcome::Updated),
            "{outcome:?}"
        );
        exec.launch(&stream).unwrap(); // (4 + 2) * 10 = 60 (third still disabled)
        stream.synchronize().unwrap();
    }
    assert!(stream.clone_dtoh(&x).unwrap().iter().all(|v| *v == 60.0));
    // A build error names the DSL label: zero elements make a zero grid.
    let err = Attributes::build(&ctx, &mut x, 0).expect_err("a zero grid is rejected");
    assert!(
        matches!(&err, graph_runtime::GraphError::InvalidArguments {
            label,
            reason: graph_runtime::error::ArgumentRefusal::ZeroGrid { x: 0, y: 1, z: 1 },
        } if label == "first"),
        "{err:?}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_failing_kernel_node_stops_the_build_with_its_label() {
    let ctx = gpu();
    let stream: Arc<CudaStream> = ctx.new_stream().unwrap();
    let mut x = stream.clone_htod(&vec![1.0f32; N as usize]).unwrap();
    let mut out = vec![0.0f32; N as usize];
    let blocks = N.div_ceil(256);
    // Every node fine: 1 * 2 * 3 * 5 copied back (the handle stays 0, so
    // the body never runs).
    {
        let mut exec = FailsMidway::build(&ctx, &mut x, &mut out, N, blocks, blocks)
            .unwrap()
            .instantiate()
            .unwrap();
        exec.launch(&stream).unwrap();
        stream.synchronize().unwrap();
    }
    assert!(out.iter().all(|v| *v == 30.0), "{:?}", &out[..4]);
    // The middle kernel fails: its error comes back, not a later node's.
    let err =
        FailsMidway::build(&ctx, &mut x, &mut out, N, 0, 0).expect_err("a zero grid is rejected");
    assert!(
        err.to_string().starts_with("node `middle`: grid 0x1x1"),
        "{err}"
    );
    // A kernel in a body fails: the body's failure comes back.
    let err = FailsMidway::build(&ctx, &mut x, &mut out, N, blocks, 0)
        .expect_err("a zero grid is rejected");
    assert!(
        err.to_string().starts_with("node `inner`: grid 0x1x1"),
        "{err}"
    );
}

/// What the four-step prologue chain leaves in `x0` when step `i` uses
/// `works[i]`: the host computes the same fused multiply-adds.
fn prologue_chain_expected(x0: &[f32], works: [u32; 4]) -> Vec<u32> {
    x0.iter()
        .enumerate()
        .map(|(i, &v)| {
            works
                .iter()
                .fold(v, |x, &w| {
                    x.mul_add(0.5, kernels::pdl_prologue(i as u32, w))
                })
                .to_bits()
        })
        .collect()
}

#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn pdl_chains_match_ordinary_edges_and_take_updates() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let n = 132 * 256;
    let work = 300;
    let x0: Vec<f32> = (0..n).map(|i| (i % 613) as f32 - 100.0).collect();
    let mut ordinary = stream.clone_htod(&x0).unwrap();
    let mut programmatic = stream.clone_htod(&x0).unwrap();
    let mut launch_order = stream.clone_htod(&x0).unwrap();
    {
        let g = OrdinaryChain::build(&ctx, &mut ordinary, n, work).unwrap();
        g.instantiate().unwrap().launch(&stream).unwrap();
        let g = ProgrammaticChain::build(&ctx, &mut programmatic, n, work).unwrap();
        g.instantiate().unwrap().launch(&stream).unwrap();
        let g = LaunchOrderChain::build(&ctx, &mut launch_order, n, work).unwrap();
        g.instantiate().unwrap().launch(&stream).unwrap();
        stream.synchronize().unwrap();
    }
    let expected = prologue_chain_expected(&x0, [work; 4]);
    let bits = |x: &CudaSlice<f32>| -> Vec<u32> {
        stream
            .clone_dtoh(x)
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect()
    };
    assert!(bits(&ordinary) == expected, "ordinary edges");
    assert!(bits(&programmatic) == expected, "programmatic edges");
    assert!(bits(&launch_order) == expected, "launch-order edges");
    assert!(LaunchOrderChain::DOT.contains("label=\"launch_order\""));

    // Per-node and whole-graph updates of the launch-order graph.
    let mut x = stream.clone_htod(&x0).unwrap();
    {
        let g = LaunchOrderChain::build(&ctx, &mut x, n, work).unwrap();
        let bound = g.bound();
        let mut exec = g.instantiate().unwrap();
        exec.s3().set_args((bound.x, n, 7)).unwrap();
        exec.launch(&stream).unwrap();
        let again = g.rebuild(bound.x, n, 11).unwrap();
        let outcome = exec.update(&again).unwrap();
        assert!(
            matches!(outcome, graph_runtime::UpdateOutcome::Updated),
            "{outcome:?}"
        );
        exec.launch(&stream).unwrap();
        stream.synchronize().unwrap();
    }
    let once: Vec<f32> = prologue_chain_expected(&x0, [work, work, work, 7])
        .into_iter()
        .map(f32::from_bits)
        .collect();
    assert!(bits(&x) == prologue_chain_expected(&once, [11; 4]));
}

/// A user's own loop-driving kernels: CUDA C that calls
/// `cudaGraphSetConditional` with no declaration of its own (the runtime's
/// `DEVICE_PRELUDE` gives it), and one that declares it again (harmless).
mod user_conditional_kernels {
    use super::*;
    use graph_runtime::kernel::{Cond, OutFirst};

    const HALVING: &str = r#"
extern "C" __global__ void halve_until_small(cudaGraphConditionalHandle again, float* x, int* steps) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        x[0] *= 0.5f;
        steps[0] += 1;
        cudaGraphSetConditional(again, x[0] > 1.0f);
    }
}"#;

    const DECLARING: &str = r#"
extern "C" __device__ void cudaGraphSetConditional(unsigned long long handle, unsigned int value);
extern "C" __global__ void pick_arm(unsigned long long which, const int* arm) {
    if (threadIdx.x == 0 && blockIdx.x == 0) cudaGraphSetConditional(which, (unsigned) arm[0]);
}"#;

    graph_runtime::declare_kernel! {
        // SAFETY: matches `halve_until_small(unsigned long long, float*, int*)`;
        // it touches x[0] and steps[0] only, which OutFirst<_, 1> checks.
        HalveUntilSmall: (Cond, OutFirst<f32, 1>, OutFirst<i32, 1>) =
            unsafe cuda_c(HALVING, "halve_until_small");
        // SAFETY: matches `pick_arm(unsigned long long, const int*)`; reads arm[0].
        PickArm: (Cond, graph_runtime::kernel::InFirst<i32, 1>) = unsafe cuda_c(DECLARING, "pick_arm");
    }

    cuda_graph! {
        graph Halving(x: &mut CudaSlice<f32>, steps: &mut CudaSlice<i32>, arm: &CudaSlice<i32>,
                      hits: &mut CudaSlice<f32>) {
            cond again = 1;
            halving: while again {
                step: kernel HalveUntilSmall<<<1, 32>>>(again, x, steps);
            }
            cond which;
            pick: kernel PickArm<<<1, 1>>>(which, arm);
            choose: switch which {
                0 => { zero: kernel kernels::Iota<<<1, 32>>>(hits, 1u32); }
                1 => { one: kernel kernels::AddOne<<<1, 32>>>(hits, 1u32); }
            }
            halving -> pick -> choose;
        }
    }

    #[test]
    #[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
    fn a_users_kernel_drives_a_while_loop_and_a_switch() {
        let ctx = gpu();
        let stream = ctx.new_stream().unwrap();
        let mut x = stream.clone_htod(&[100.0f32]).unwrap();
        let mut steps = stream.alloc_zeros::<i32>(1).unwrap();
        let arm = stream.clone_htod(&[1i32]).unwrap();
        let mut hits = stream.clone_htod(&[5.0f32]).unwrap();
        {
            let g = Halving::build(&ctx, &mut x, &mut steps, &arm, &mut hits).unwrap();
            let mut exec = g.instantiate().unwrap();
            exec.launch(&stream).unwrap();
            exec.synchronize().unwrap();
        }
        // 100 -> 50 -> 25 -> 12.5 -> 6.25 -> 3.125 -> 1.5625 -> 0.78125: 7 steps.
        assert_eq!(stream.clone_dtoh(&x).unwrap(), [0.78125]);
        assert_eq!(stream.clone_dtoh(&steps).unwrap(), [7]);
        // Arm 1 (AddOne) ran, arm 0 (Iota, which would write 0) did not.
        assert_eq!(stream.clone_dtoh(&hits).unwrap(), [6.0]);
    }
}

#[path = "gpu_macro/device_buffers.rs"]
mod device_buffers;

#[path = "gpu_macro/handles.rs"]
mod handles;

#[path = "gpu_macro/expression_form.rs"]
mod expression_form;
