//! GPU tests of repeated blocks (`label: for i in 0..n { ... }`): counts of
//! 0, 1 and 10,000, values read back, updates of indexed nodes, whole-graph
//! updates to another count, and a profile whose rows name the iteration.
//! Ignored unless asked for (`cargo test -- --include-ignored`).

use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::error::ArgumentRefusal;

#[path = "gpu_runtime/common.rs"]
#[allow(dead_code)]
mod common;
use common::gpu;

/// Elements per lane.
const LANE: usize = 32;

cuda_graph! {
    /// `width` lanes, each a chain of `length` add-ones on its part of `x`,
    /// between a fill and a doubling of the whole buffer.
    graph Lanes(x: &mut CudaSlice<f32>, width: usize, length: usize) {
        init: fill x = 0.0f32;
        #[disjoint(x)]
        lanes: for w in 0..width {
            chain: for i in 0..length {
                step: kernel kernels::AddOne<<<1, 32>>>(x.slice(w * LANE..(w + 1) * LANE), LANE as u32);
                step[i-1] -> step;
            }
        }
        double: kernel kernels::Scale<<<(width.max(1) * LANE).div_ceil(256) as u32, 256>>>(x, 2.0f32, (width.max(1) * LANE) as u32);
        init -> lanes -> double;
    }

    /// Lanes `overlap` elements into the next lane's part, which their
    /// `#[disjoint(x)]` claim denies: checked when built.
    graph Overlapping(x: &mut CudaSlice<f32>, width: usize, overlap: usize) {
        #[disjoint(x)]
        lanes: for w in 0..width {
            zero: fill x.slice(w * LANE..(w + 1) * LANE) = 0.0f32;
            step: kernel kernels::AddOne<<<1, 32>>>(x.slice(w * LANE..(w + 1) * LANE + overlap), LANE as u32);
            zero -> step;
        }
    }

    /// `x = y + y`: two buffers `rebuild` must keep apart.
    graph Doubled(x: &mut CudaSlice<f32>, y: &CudaSlice<f32>, n: u32) {
        add: kernel kernels::Add<<<1, 32>>>(y, y, x, n);
    }

    /// Per layer: a scratch buffer of 0, 1, 2, .. added to `x`, then an IF
    /// (default 1) that adds one; layers in order.
    graph Layers(x: &mut CudaSlice<f32>, layers: u32) {
        init: fill x = 0.0f32;
        layer: for l in 0..layers {
            cond go = 1;
            alloc scratch: f32[LANE] {
                count_up: kernel kernels::Iota<<<1, 32>>>(scratch, LANE as u32);
                add: kernel kernels::Add<<<1, 32>>>(scratch, x, x, LANE as u32);
                count_up -> add;
            }
            maybe: if go {
                bump: kernel kernels::AddOne<<<1, 32>>>(x, LANE as u32);
            }
            scratch -> maybe;
            maybe[l-1] -> scratch;
        }
        init -> layer;
    }

    /// One step placed twice: as a prologue, then as a WHILE body; its
    /// kernel sets the loop's handle (counter 3: x gains 3).
    graph Placed(x: &mut CudaSlice<f32>, counter: &mut CudaSlice<i32>) {
        cond again = 1;
        fragment step {
            bump: kernel kernels::AddOne<<<1, 32>>>(x, LANE as u32);
            down: kernel kernels::CountdownStep<<<1, 1>>>(again, counter);
            bump -> down;
        }
        first: use step;
        rest: while again {
            body: use step;
        }
        first -> rest;
    }

    /// A WHILE of `rounds` iterations whose body is `sweeps` chained add-ones.
    graph Rounds(x: &mut CudaSlice<f32>, counter: &mut CudaSlice<i32>, sweeps: usize) {
        cond again = 1;
        outer: while again {
            inner: for s in 0..sweeps {
                sweep: kernel kernels::AddOne<<<1, 32>>>(x, LANE as u32);
                sweep[s-1] -> sweep;
            }
            stop: kernel kernels::CountdownStep<<<1, 1>>>(again, counter);
            inner -> stop;
        }
    }
}

fn read(
    stream: &std::sync::Arc<graph_runtime::cudarc::driver::CudaStream>,
    x: &CudaSlice<f32>,
) -> Vec<f32> {
    stream.clone_dtoh(x).unwrap()
}

/// Counts 0, 1 and more for both blocks, each lane read back.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn lanes_of_chains_add_their_length_for_every_count() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    for (width, length) in [(0, 5), (3, 0), (1, 1), (4, 7), (2, 100)] {
        let mut x = stream.alloc_zeros::<f32>(width.max(1) * LANE).unwrap();
        {
            let graph = Lanes::build(&ctx, &mut x, width, length).unwrap();
            assert_eq!(graph.graph().node_count(), 2 + width * length);
            let mut exec = graph.instantiate().unwrap();
            exec.launch(&stream).unwrap();
            exec.synchronize().unwrap();
        }
        let got = read(&stream, &x);
        let want = if width == 0 { 0.0 } else { 2.0 * length as f32 };
        assert!(
            got.iter().all(|&v| v == want),
            "{width} x {length}: {got:?}"
        );
    }
}

/// 10,000 repeated nodes, built by the loop: the values and the build time.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn ten_thousand_iterations_build_and_run() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let (width, length) = (10, 1_000);
    let mut x = stream.alloc_zeros::<f32>(width * LANE).unwrap();
    {
        let start = std::time::Instant::now();
        let graph = Lanes::build(&ctx, &mut x, width, length).unwrap();
        let built = start.elapsed();
        assert_eq!(graph.graph().node_count(), 2 + width * length);
        let labels = graph.graph().labels();
        assert_eq!(labels[1], "step[0][0]");
        assert_eq!(labels[1 + width * length - 1], "step[9][999]");
        let mut exec = graph.instantiate().unwrap();
        println!("10,000 repeated nodes built in {built:?}");
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
    }
    let got = read(&stream, &x);
    assert!(got.iter().all(|&v| v == 2000.0), "{:?}", &got[..4]);
}

/// An indexed node disabled and re-enabled through its accessor; a
/// whole-graph update to other counts (re-instantiated: the topology
/// differs), then back to the same counts (updated in place).
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn indexed_nodes_update_and_whole_graph_updates_change_the_count() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(4 * LANE).unwrap();
    let lanes = {
        let graph = Lanes::build(&ctx, &mut x, 4, 5).unwrap();
        let mut exec = graph.instantiate().unwrap();
        exec.step(2, 3).set_enabled(false).unwrap();
        exec.launch(&stream).unwrap();
        {
            let mut bound = exec.bound_mut(graph.bound().x).unwrap();
            let got = stream.clone_dtoh(&bound.view_mut()).unwrap();
            for (w, lane) in got.chunks(LANE).enumerate() {
                let want = if w == 2 { 8.0 } else { 10.0 };
                assert!(lane.iter().all(|&v| v == want), "lane {w}: {lane:?}");
            }
        }
        exec.step(2, 3).set_enabled(true).unwrap();
        let longer = graph.rebuild(graph.bound().x, 4, 9).unwrap();
        let outcome = exec.update(&longer).unwrap();
        println!("to 4 x 9: {outcome:?}");
        exec.launch(&stream).unwrap();
        {
            let mut bound = exec.bound_mut(graph.bound().x).unwrap();
            let got = stream.clone_dtoh(&bound.view_mut()).unwrap();
            assert!(got.iter().all(|&v| v == 18.0), "{got:?}");
        }
        let same = longer.rebuild(graph.bound().x, 4, 9).unwrap();
        let outcome = exec.update(&same).unwrap();
        assert!(
            matches!(outcome, graph_runtime::UpdateOutcome::Updated),
            "same counts, same topology: {outcome:?}"
        );
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
        4
    };
    let got = read(&stream, &x);
    assert_eq!(got.len(), lanes * LANE);
    assert!(got.iter().all(|&v| v == 18.0), "{got:?}");
}

/// The macro's race check holds after updates: a lane's node may be
/// narrowed to part of its slice, not pointed at the whole buffer (it would
/// race with the other lanes); a rebuild may not pass one buffer for two
/// parameters, one written.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn updates_cannot_void_the_race_check() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(4 * LANE).unwrap();
    {
        let graph = Lanes::build(&ctx, &mut x, 4, 2).unwrap();
        let bound = graph.bound();
        let mut exec = graph.instantiate().unwrap();
        let whole = exec.step(1, 0).set_args((bound.x, LANE as u32));
        assert!(
            matches!(
                whole,
                Err(graph_runtime::GraphError::NodeUpdateRefused {
                    reason: graph_runtime::error::NodeUpdateRefusal::OtherMemory,
                    ..
                })
            ),
            "{whole:?}"
        );
        let half = LANE / 2;
        exec.step(1, 0)
            .set_args((bound.x.slice(LANE..LANE + half), half as u32))
            .unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
    }
    let got = read(&stream, &x);
    for (w, lane) in got.chunks(LANE).enumerate() {
        for (i, &v) in lane.iter().enumerate() {
            let want = if w == 1 && i >= LANE / 2 { 2.0 } else { 4.0 };
            assert_eq!(v, want, "lane {w}, element {i}");
        }
    }
    let (mut a, b) = (
        stream.alloc_zeros::<f32>(32).unwrap(),
        stream.clone_htod(&[1.0f32; 32]).unwrap(),
    );
    let graph = Doubled::build(&ctx, &mut a, &b, 32).unwrap();
    let bound = graph.bound();
    let same = graph.rebuild(bound.x, bound.x, 32);
    match same {
        Err(graph_runtime::GraphError::Unsupported {
            operation: "rebuild",
            what: graph_runtime::error::Unsupported::OverlappingRebuildBuffers { first, second },
            ..
        }) => assert_eq!((first.as_str(), second.as_str()), ("x", "y")),
        other => panic!("{other:?}"),
    }
    assert!(graph.rebuild(bound.x, bound.y, 16).is_ok());
}

/// One lane too many for the buffer: its part is sliced past the end, and
/// the build fails with a typed error naming that lane's first node.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_lane_sliced_past_the_buffer_fails_the_build_naming_it() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(4 * LANE).unwrap();
    let built = Lanes::build(&ctx, &mut x, 5, 3);
    match built {
        Err(graph_runtime::GraphError::InvalidArguments { label, reason }) => {
            assert_eq!(label, "step[4][0]");
            assert_eq!(reason, ArgumentRefusal::PartPastEnd);
        }
        other => panic!("{:?}", other.err()),
    }
}

/// A `#[disjoint(x)]` claim is checked once the block is built: lanes that
/// reach one element into the next lane's part fail the build, naming a
/// node of each; lanes apart, or one lane alone, build and run.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_wrong_disjoint_claim_fails_the_build_naming_both_iterations() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(4 * LANE).unwrap();
    match Overlapping::build(&ctx, &mut x, 3, 1) {
        Err(graph_runtime::GraphError::Unordered {
            label,
            rule: graph_runtime::error::OrderRule::DisjointIterationsOverlap { other, block },
        }) => {
            assert_eq!(block, "lanes");
            let mut pair = [label, other];
            pair.sort();
            // Lane 0's kernel reaches lane 1's fill, or lane 1's its kernel.
            assert!(
                pair == ["step[0]", "zero[1]"] || pair == ["step[0]", "step[1]"],
                "{pair:?}"
            );
        }
        other => panic!("{:?}", other.err()),
    }
    for (width, overlap) in [(3, 0), (1, 1)] {
        Overlapping::build(&ctx, &mut x, width, overlap)
            .unwrap()
            .instantiate()
            .unwrap()
            .launch(&stream)
            .unwrap();
    }
    stream.synchronize().unwrap();
    // Lane 0 of the last build zeroed its 32 elements and added one;
    // element 32, lane 1's, holds the build before's 1.
    let got = read(&stream, &x);
    assert!(got[..=LANE].iter().all(|&v| v == 1.0), "{got:?}");
}

/// A free and a capture refuse a part sliced past its buffer's end as
/// such, as kernel, copy and fill nodes do (not as a buffer of no graph).
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn frees_and_captures_refuse_parts_past_the_end_as_such() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(100).unwrap();
    let mut g = graph_runtime::Graph::new(&ctx).unwrap();
    let xb = g.bind_mut(&mut x);
    let (alloc, a) = g.add_alloc::<f32>("a", 10, &[]).unwrap();
    let past_the_end = |result: graph_runtime::Result<graph_runtime::Node>, node: &str| match result
    {
        Err(graph_runtime::GraphError::InvalidArguments { label, reason }) => {
            assert_eq!(label, node);
            assert_eq!(reason, ArgumentRefusal::PartPastEnd);
        }
        other => panic!("{node}: {other:?}"),
    };
    past_the_end(g.add_free("free", a.slice(0..1000), &[alloc]), "free");
    let capture_stream = ctx.new_stream().unwrap();
    // SAFETY: the work queues nothing.
    let captured = unsafe {
        g.add_capture("cap", &capture_stream, &[], |cap| {
            let _ = cap.write(xb.slice(90..110));
            Ok(())
        })
    };
    past_the_end(captured, "cap");
    g.add_free("free", a, &[alloc]).unwrap();
}

/// The graph cache keyed by the count: a miss per count, then updates.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn the_graph_cache_keys_repeated_graphs_by_their_count() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(2 * LANE).unwrap();
    {
        let template = Lanes::build(&ctx, &mut x, 2, 1).unwrap();
        let bound = template.bound();
        let mut cache = graph_runtime::GraphCache::new(4);
        let mut outcomes = Vec::new();
        for length in [3usize, 5, 3, 5, 3] {
            let outcome = cache
                .launch(length, &stream, &Lanes::OPTIONS, || {
                    Ok(template.rebuild(bound.x, 2, length)?.into_graph())
                })
                .unwrap();
            outcomes.push(format!("{outcome:?}"));
        }
        assert_eq!(outcomes, ["Miss", "Miss", "Hit", "Hit", "Hit"]);
        stream.synchronize().unwrap();
    }
    let got = read(&stream, &x);
    assert!(got.iter().all(|&v| v == 6.0), "{got:?}");
}

/// An index past the last iteration panics, naming the node and iteration.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
#[should_panic(expected = "step[1][5] is out of range")]
fn an_accessor_index_out_of_range_panics_naming_the_iteration() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(2 * LANE).unwrap();
    let graph = Lanes::build(&ctx, &mut x, 2, 5).unwrap();
    let mut exec = graph.instantiate().unwrap();
    let _ = exec.step(1, 5);
}

/// Per-iteration scratch buffers, conditionals and an edge between
/// iterations: x[j] = layers * (j + 1).
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn layers_with_scratch_and_conditionals_per_iteration() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    for layers in [0u32, 1, 6] {
        let mut x = stream.alloc_zeros::<f32>(LANE).unwrap();
        {
            let graph = Layers::build(&ctx, &mut x, layers).unwrap();
            let mut exec = graph.instantiate().unwrap();
            exec.launch(&stream).unwrap();
            exec.synchronize().unwrap();
        }
        let got = read(&stream, &x);
        for (j, &v) in got.iter().enumerate() {
            assert_eq!(
                v,
                (layers as usize * (j + 1)) as f32,
                "{layers} layers, x[{j}]"
            );
        }
    }
}

/// A repeated block in a WHILE body: 3 rounds of `sweeps` add-ones.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_repeated_block_in_a_while_body() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(LANE).unwrap();
    let mut counter = stream.clone_htod(&[3i32]).unwrap();
    {
        let graph = Rounds::build(&ctx, &mut x, &mut counter, 5).unwrap();
        let mut exec = graph.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
    }
    let got = read(&stream, &x);
    assert!(got.iter().all(|&v| v == 15.0), "{got:?}");
}

/// A fragment placed as a prologue and as a WHILE body, driving the loop.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_fragment_placed_twice_drives_its_loop() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(LANE).unwrap();
    let mut counter = stream.clone_htod(&[3i32]).unwrap();
    {
        let graph = Placed::build(&ctx, &mut x, &mut counter).unwrap();
        let labels = graph.graph().labels();
        assert!(labels.contains(&"first.bump".to_string()), "{labels:?}");
        assert!(labels.contains(&"body.down".to_string()), "{labels:?}");
        let mut exec = graph.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
    }
    let got = read(&stream, &x);
    assert!(got.iter().all(|&v| v == 3.0), "{got:?}");
    assert_eq!(stream.clone_dtoh(&counter).unwrap(), [0]);
}

/// The expression form repeats too, binding `&mut x` once.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn the_expression_form_repeats() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(LANE).unwrap();
    let n = 4;
    {
        let graph = cuda_graph! {
            graph(&ctx) {
                first: fill &mut x = 1.0f32;
                twice: for i in 0..n {
                    a: kernel kernels::AddOne<<<1, 32>>>(&mut x, LANE as u32);
                    b: kernel kernels::Scale<<<1, 32>>>(&mut x, 2.0f32, LANE as u32);
                    a -> b;
                    b[i-1] -> a;
                }
                first -> twice;
            }
        }
        .unwrap();
        assert_eq!(graph.node_count(), 1 + 2 * n);
        let mut exec = graph.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        exec.synchronize().unwrap();
    }
    // 1 -> 4 -> 10 -> 22 -> 46
    let got = read(&stream, &x);
    assert!(got.iter().all(|&v| v == 46.0), "{got:?}");
}

/// A profile of a repeated graph names each row's iteration.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn a_profile_names_the_iteration_of_each_row() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut x = stream.alloc_zeros::<f32>(2 * LANE).unwrap();
    let mut graph = Lanes::build(&ctx, &mut x, 2, 3).unwrap();
    let profile = graph.graph_mut().profile(&stream).unwrap();
    println!("{profile}");
    let labels: Vec<&str> = profile.nodes().iter().map(|n| n.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "init",
            "step[0][0]",
            "step[0][1]",
            "step[0][2]",
            "step[1][0]",
            "step[1][1]",
            "step[1][2]",
            "double"
        ]
    );
    // Each chain starts after `init`, each step after the one before, and
    // `double` after each lane's last step.
    let deps = |label: &str| -> Vec<&str> {
        let node = profile.nodes().iter().find(|n| n.label == label).unwrap();
        node.deps
            .iter()
            .map(|&d| profile.nodes()[d].label.as_str())
            .collect()
    };
    assert_eq!(deps("step[1][0]"), ["init"]);
    assert_eq!(deps("step[1][2]"), ["step[1][1]"]);
    assert_eq!(deps("double"), ["step[0][2]", "step[1][2]"]);
}
