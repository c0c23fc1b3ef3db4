//! The benchmarks behind BENCHMARKS.md: `cuda_graph!` graphs against the
//! same graphs through raw driver calls, C++ CUDA-runtime code (compiled at
//! run time and loaded into this process) and streams, plus loops, updates,
//! graph memory and the macro's own cost.
//! `cargo bench -p graph-bench` runs them (on a machine without CUDA, only
//! the CPU-side workload).

pub mod chains;
pub mod cpp;
pub mod launch_loop;
pub mod pdl;
pub mod scaling;
pub mod timing;
pub mod workloads;

use scaling::Row;
use std::fmt::Write;
use timing::Result;

const WIDTHS: [usize; 3] = [1, 4, 16];
const LENGTHS: [usize; 3] = [10, 100, 1000];
/// Timed launches per measurement (after 3 warm-ups); medians are reported.
const REPS: usize = 101;

/// Runs everything; prints the ratio table; returns the full report text.
pub fn run() -> Result<String> {
    let mut report = String::new();
    let mut misses: Vec<String> = Vec::new();
    let _ = writeln!(
        report,
        "## Macro cost at compile time (parse + check + expand, median of 5)\n"
    );
    let _ = writeln!(report, "| nodes | ms |\n| --- | --- |");
    for nodes in [100, 1_000, 10_000] {
        let _ = writeln!(
            report,
            "| {nodes} | {:.2} |",
            workloads::macro_time(nodes, 5)
        );
    }
    if !graph_runtime::driver::driver_available() {
        let _ = writeln!(
            report,
            "\nno CUDA driver on this machine: the GPU workloads were not run"
        );
        return Ok(report);
    }
    let ctx = graph_runtime::driver::context(0)?;
    // The graph comparisons measure graph machinery, so cudarc's per-slice
    // event tracking (its own per-launch cost, measured separately below)
    // is off. SAFETY: each workload orders its own streams explicitly.
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.new_stream()?;
    let (major, minor) = ctx.compute_capability()?;
    let cpp = cpp::Cpp::build(major, minor);
    let _ = writeln!(
        report,
        "\nGPU: {} (sm_{major}{minor}); C++ baseline: {}",
        ctx.name()?,
        cpp.skipped().unwrap_or("nvcc -O3")
    );

    // GRAPH_BENCH_ONLY=build_ab: the 1x10 build + instantiate, variant
    // against variant, alone.
    if std::env::var("GRAPH_BENCH_ONLY").as_deref() == Ok("build_ab") {
        let mut full = String::new();
        if let Some(lib) = cpp.ready() {
            build_ab_section(&ctx, &stream, lib, &mut report, &mut full)?;
        }
        return Ok(with_targets(report, &full, &misses));
    }

    // GRAPH_BENCH_ONLY=launch_loop: the updates and launch-loop tables
    // alone (issue 31's targets), in a few minutes less than the whole run.
    if std::env::var("GRAPH_BENCH_ONLY").as_deref() == Ok("launch_loop") {
        let mut full = String::new();
        updates_section(&ctx, &stream, &mut report, &mut full, &mut misses)?;
        if let Some(lib) = cpp.ready() {
            launch_loop_section(&ctx, lib, &mut report, &mut full, &mut misses)?;
        }
        return Ok(with_targets(report, &full, &misses));
    }

    let _ = writeln!(report, "\n## Perf scaling: width x length chains of tiny kernels (per node: us; ratios macro / other)\n");
    let _ = writeln!(
        report,
        "| shape | build macro / raw / C++ | instantiate macro / raw / C++ | launch macro / raw / C++ / streams | device macro / raw / C++ / streams | launch macro:raw | launch macro:C++ | device macro:C++ | build+inst macro:C++ | speedup over C++ streams: macro / C++ graph |"
    );
    let _ = writeln!(
        report,
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    let mut full = String::new();
    let mut origin = String::new();
    for width in WIDTHS {
        for length in LENGTHS {
            let nodes = (width * length) as f64;
            // One set of buffers for every variant of this shape.
            let mut bufs = (0..width)
                .map(|_| stream.alloc_zeros::<f32>(32))
                .collect::<std::result::Result<Vec<_>, _>>()?;
            let builds = scaling::interleaved_builds(
                &ctx,
                &stream,
                cpp.ready(),
                &mut bufs,
                length,
                scaling::BUILD_ROUNDS,
            )?;
            let launches = scaling::launches(&ctx, &stream, cpp.ready(), &mut bufs, length, REPS)?;
            let [mut ours, mut raw, cpp_row] = launches.rows;
            (ours.build, ours.instantiate) = builds.medians(0);
            (raw.build, raw.instantiate) = builds.medians(1);
            let (streams_host, streams_device) =
                scaling::streams(&ctx, &stream, &mut bufs, length, REPS)?;
            let native = match cpp.ready() {
                Some(lib) => {
                    let (s, sd) = scaling::cpp_streams(lib, &stream, &mut bufs, length, REPS)?;
                    let mut row = cpp_row;
                    (row.build, row.instantiate) = builds.medians(2);
                    Some((row, s, sd))
                }
                None => None,
            };
            let per = |v: f64| v / nodes;
            let c = |f: fn(&Row) -> f64| {
                native.map_or("-".to_string(), |(r, _, _)| format!("{:.3}", per(f(&r))))
            };
            // Launch and device against raw and C++: medians of per-slot
            // ratios (execs created side by side, see scaling::launches).
            let vs_raw = launches.paired_ratio(0, 1);
            let vs_cpp = native.map(|_| launches.paired_ratio(0, 2));
            // Build + instantiate against C++: the median of the per-round
            // ratios (each round measures both back to back).
            let build_ratio = native.map(|_| builds.paired_ratio(0, 2));
            let cpp_speedup = native
                .zip(vs_cpp)
                .map(|((r, s, _), (launch, _))| (s / r.launch / launch, s / r.launch));
            let _ = writeln!(
                report,
                "| {width}x{length} | {:.3} / {:.3} / {} | {:.3} / {:.3} / {} | {:.3} / {:.3} / {} / {:.3} | {:.3} / {:.3} / {} / {:.3} | {:.3} | {} | {} | {} | {:.2} / {} |",
                per(ours.build), per(raw.build), c(|r| r.build),
                per(ours.instantiate), per(raw.instantiate), c(|r| r.instantiate),
                per(ours.launch), per(raw.launch), c(|r| r.launch), per(streams_host),
                per(ours.device), per(raw.device), c(|r| r.device), per(streams_device),
                vs_raw.0,
                vs_cpp.map_or("-".to_string(), |(l, _)| format!("{l:.3}")),
                vs_cpp.map_or("-".to_string(), |(_, d)| format!("{d:.3}")),
                build_ratio.map_or("-".to_string(), |r| format!("{r:.3}")),
                cpp_speedup.map_or(f64::NAN, |(m, _)| m),
                cpp_speedup.map_or("-".to_string(), |(_, c)| format!("{c:.2}")),
            );
            if native.is_some() {
                let _ = writeln!(
                    origin,
                    "| {width}x{length} | {:.3} / {:.3} | {:.3} | {:.3} |",
                    per(raw.build),
                    per(raw.instantiate),
                    builds.paired_ratio(0, 1),
                    builds.paired_ratio(1, 2),
                );
            }
            let _ = writeln!(
                full,
                "{width}x{length} launch, device per slot for {:?}: {:?}",
                scaling::LAUNCH_VARIANTS,
                launches.slots
            );
            let _ = writeln!(full, "{width}x{length} macro {ours:?}\n{width}x{length} raw {raw:?}\n{width}x{length} streams host {streams_host} device {streams_device}\n{width}x{length} cpp {native:?}\n{width}x{length} build rounds (build, instantiate) per variant {:?}: {:?}", scaling::BUILD_VARIANTS, builds.samples);
            if let (Some((launch, device)), Some(build_ratio)) = (vs_cpp, build_ratio) {
                if launch > 1.02 {
                    misses.push(format!(
                        "{width}x{length}: launch {launch:.3}x C++ (target 1.02)"
                    ));
                }
                if device > 1.02 {
                    misses.push(format!(
                        "{width}x{length}: device {device:.3}x C++ (target 1.02)"
                    ));
                }
                // Issue 28's target.
                if build_ratio > 1.05 {
                    misses.push(format!(
                        "{width}x{length}: build+instantiate {build_ratio:.3}x C++ (target 1.05)"
                    ));
                }
                // Against the same stream baseline (C++'s), the macro graph
                // must beat streams by at least what the C++ graph does.
                // (Within the 2% the launch target allows.)
                if let Some((ours_gain, cpp_gain)) = cpp_speedup.filter(|(o, c)| *o < 0.98 * c) {
                    misses.push(format!(
                        "{width}x{length}: over C++ streams the macro graph gains {ours_gain:.2}x, the C++ graph {cpp_gain:.2}x"
                    ));
                }
            }
        }
    }
    if !origin.is_empty() {
        let _ = writeln!(
            report,
            "\n### Build + instantiate against raw driver calls (us per node; builds: medians of {} interleaved rounds, ratios: medians of per-round build + instantiate ratios)\n",
            scaling::BUILD_ROUNDS
        );
        let _ = writeln!(report, "| shape | raw: build / instantiate | macro : raw | raw : C++ |\n| --- | --- | --- | --- |");
        report.push_str(&origin);
    }

    if let Some(lib) = cpp.ready() {
        build_ab_section(&ctx, &stream, lib, &mut report, &mut full)?;
    }

    // GRAPH_BENCH_ONLY=scaling stops here, after the build breakdown:
    // enough to compare two builds of the runtime's node-adding path (see
    // BENCHMARKS.md, run 22).
    let breakdown = scaling::build_breakdown(&ctx, &stream)?;
    if std::env::var("GRAPH_BENCH_ONLY").as_deref() == Ok("scaling") {
        report.push('\n');
        report.push_str(&breakdown);
        return Ok(report);
    }
    full.push_str(&breakdown);

    let steps = 1000;
    let reps = 24;
    let loops = workloads::loops(&ctx, &stream, cpp.ready(), steps, reps)?;
    let m = loops.medians();
    let s = f64::from(steps);
    let _ = writeln!(
        report,
        "\n## Loop of {steps} dependent steps (us per step, medians of {reps} interleaved rounds; ratios: medians of per-round ratios)\n"
    );
    let _ = writeln!(
        report,
        "| {} | host / WHILE | C++ host / C++ WHILE |",
        workloads::LOOP_VARIANTS.join(" | ")
    );
    let _ = writeln!(
        report,
        "|{}",
        " --- |".repeat(workloads::LOOP_VARIANTS.len() + 2)
    );
    let cell = |v: f64| {
        if v.is_nan() {
            "-".to_string()
        } else {
            format!("{:.2}", v / s)
        }
    };
    let [(host, while_), (cpp_host, cpp_while)] = workloads::HOST_OVER_WHILE;
    let ours_ahead = loops.paired_ratio(host, while_);
    let cpp_ahead = cpp.ready().map(|_| loops.paired_ratio(cpp_host, cpp_while));
    let _ = writeln!(
        report,
        "| {} | {ours_ahead:.2} | {} |",
        m.iter().map(|&v| cell(v)).collect::<Vec<_>>().join(" | "),
        cpp_ahead.map_or("-".to_string(), |r| format!("{r:.2}")),
    );
    let _ = writeln!(
        full,
        "loop rounds (us) per variant {:?}: {:?}",
        workloads::LOOP_VARIANTS,
        loops.samples
    );
    let _ = writeln!(full, "WHILE graph, macro:\n{}", loops.dot);
    full.push_str(&loops.per_slot(steps));
    if let Some(cpp_ahead) = cpp_ahead {
        if ours_ahead < 0.98 * cpp_ahead {
            misses.push(format!(
                "loop: WHILE {ours_ahead:.2}x ahead of the host loop, C++ {cpp_ahead:.2}x"
            ));
        }
    }

    updates_section(&ctx, &stream, &mut report, &mut full, &mut misses)?;

    let reserved = workloads::disjoint_reserved(&ctx, &stream)?;
    let mib = 1u64 << 20;
    let _ = writeln!(
        report,
        "\n## Graph memory: 8 allocations of 64 MiB with disjoint lifetimes\n"
    );
    let _ = writeln!(report, "| peak reserved | 8 x 64 MiB | one allocation |\n| --- | --- | --- |\n| {} MiB | {} MiB | 64 MiB |", reserved / mib, 8 * 64);
    if reserved > 64 * mib + 2 * mib {
        misses.push(format!(
            "memory: {} MiB reserved for disjoint allocations",
            reserved / mib
        ));
    }

    pdl_section(&ctx, &stream, &mut report, &mut full, &mut misses)?;

    match cpp.ready() {
        Some(lib) => launch_loop_section(&ctx, lib, &mut report, &mut full, &mut misses)?,
        None => {
            let _ = writeln!(report, "\n## Launch loops and the solver\n\nskipped: they compare with C++, and there is no nvcc");
        }
    }

    Ok(with_targets(report, &full, &misses))
}

/// The report's end: the targets missed (or that all were met), then the
/// full numbers.
fn with_targets(mut report: String, full: &str, misses: &[String]) -> String {
    let _ = writeln!(report, "\n## Targets\n");
    if misses.is_empty() {
        let _ = writeln!(report, "all targets met");
    }
    for miss in misses {
        let _ = writeln!(report, "- MISSED: {miss}");
    }
    let _ = writeln!(report, "\n## Full numbers\n\n```text\n{full}```");
    report
}

/// The updates table: one node's arguments, a rebuild + whole-graph
/// update, re-instantiation, on a 100-node graph.
/// Rounds of the 1x10 A/B: enough for the median of per-round ratios to
/// settle on a noisy host (the scaling table's 31 move it by a few %).
const AB_ROUNDS: usize = 201;

/// The 1x10 build + instantiate, variant against variant (scaling::build_ab).
fn build_ab_section(
    ctx: &std::sync::Arc<graph_runtime::cudarc::driver::CudaContext>,
    stream: &std::sync::Arc<graph_runtime::cudarc::driver::CudaStream>,
    cpp: &cpp::CppLib,
    report: &mut String,
    full: &mut String,
) -> Result {
    let mut bufs = vec![stream.alloc_zeros::<f32>(32)?];
    let (table, raw) = scaling::build_ab(ctx, stream, cpp, &mut bufs, 10, AB_ROUNDS)?;
    let _ = writeln!(
        report,
        "\n### Build + instantiate of 1x10, variant against variant (us per graph: medians of {AB_ROUNDS} rotating rounds; ratio: median of per-round ratios to C++)\n"
    );
    report.push_str(&table);
    full.push_str(&raw);
    Ok(())
}

fn updates_section(
    ctx: &std::sync::Arc<graph_runtime::cudarc::driver::CudaContext>,
    stream: &std::sync::Arc<graph_runtime::cudarc::driver::CudaStream>,
    report: &mut String,
    full: &mut String,
    misses: &mut Vec<String>,
) -> Result {
    let u = workloads::updates(ctx, stream, 50)?;
    let _ = writeln!(
        report,
        "\n## Updates of a 100-node graph (us, median of 50)\n"
    );
    let _ = writeln!(report, "| one node's arguments (typed accessor), between launches | the raw driver call (`cuGraphExecKernelNodeSetParams`), interleaved | ours : raw | the same, right after a rebuild, update and instantiation | rebuild + whole-graph update | whole-graph update | re-instantiation | re-instantiation / one node |\n| --- | --- | --- | --- | --- | --- | --- | --- |");
    let _ = writeln!(
        report,
        "| {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0} |",
        u.per_node,
        u.per_node_raw,
        u.per_node_ratio,
        u.per_node_cold,
        u.rebuild_update,
        u.update,
        u.reinstantiate,
        u.reinstantiate / u.per_node
    );
    let _ = writeln!(full, "updates {u:?}");
    if u.reinstantiate < 100.0 * u.per_node {
        misses.push(format!(
            "updates: re-instantiation only {:.0}x a one-node update (target 100)",
            u.reinstantiate / u.per_node
        ));
    }
    Ok(())
}

/// Ordinary vs programmatic vs launch-order edges on chains of PDL-aware
/// kernels: the table, the full numbers and the targets' misses.
/// The launch loop (1, 4 and 16 bound buffers; plain, per-node update,
/// rebuild + whole-graph update; tracking on and off) and the Jacobi
/// solver's time to solution, each against C++.
fn launch_loop_section(
    ctx: &std::sync::Arc<graph_runtime::cudarc::driver::CudaContext>,
    cpp: &cpp::CppLib,
    report: &mut String,
    full: &mut String,
    misses: &mut Vec<String>,
) -> Result {
    let rows = launch_loop::launch_loops(ctx, cpp)?;
    let _ = writeln!(
        report,
        "\n## Launch loop: launch, read 4 bytes of a bound buffer back, relaunch (us per iteration; ratio: median of per-round ratios, interleaved with C++)\n"
    );
    let _ = writeln!(report, "| cudarc tracking | buffers | before each launch | ours | C++ | ours : C++ |\n| --- | --- | --- | --- | --- | --- |");
    for r in &rows {
        let _ = writeln!(
            report,
            "| {} | {} {} | {} | {:.2} | {:.2} | {:.3} |",
            if r.tracking { "on" } else { "off" },
            r.buffers,
            if r.owned { "graph-owned" } else { "bound" },
            launch_loop::MODES[r.mode],
            r.rust_us,
            r.cpp_us,
            r.ratio
        );
        // Issue 31's targets: 1.02 for a launch and a per-node update, 1.05
        // for a rebuild and whole-graph update.
        let target = if r.mode == launch_loop::REBUILD {
            1.05
        } else {
            1.02
        };
        if r.tracking && r.ratio > target {
            misses.push(format!(
                "launch loop, tracking on, {} {} buffers, {}: {:.3}x C++ (target {target})",
                r.buffers,
                if r.owned { "graph-owned" } else { "bound" },
                launch_loop::MODES[r.mode],
                r.ratio
            ));
        }
    }
    let _ = writeln!(full, "launch loop rows {rows:?}");
    let solver = launch_loop::solver(ctx, cpp, 64, 1e-6, 7)?;
    let medians: Vec<f64> = solver
        .us
        .iter()
        .map(|s| timing::median(s.clone()))
        .collect();
    let _ = writeln!(
        report,
        "\n## Jacobi solver to a tolerance (examples/jacobi.rs: {n} x {n}, update norm below {:e}; ms to solution, median of {} rounds)\n",
        solver.tolerance,
        solver.us[0].len(),
        n = solver.n
    );
    let _ = writeln!(
        report,
        "| {} | host loop : C++ | WHILE : C++ WHILE | steps |",
        launch_loop::SOLVER_VARIANTS.join(" | ")
    );
    let _ = writeln!(report, "|{}", " --- |".repeat(7));
    let _ = writeln!(
        report,
        "| {:.2} | {:.2} | {:.2} | {:.2} | {:.3} | {:.3} | {:?} |",
        medians[0] / 1e3,
        medians[1] / 1e3,
        medians[2] / 1e3,
        medians[3] / 1e3,
        medians[0] / medians[2],
        medians[1] / medians[3],
        solver.steps
    );
    let _ = writeln!(full, "solver {solver:?}");
    for (ours, theirs, name) in [(0, 2, "host loop"), (1, 3, "WHILE")] {
        if medians[ours] > 1.02 * medians[theirs] {
            misses.push(format!(
                "solver {name}: {:.3}x C++ (target 1.02)",
                medians[ours] / medians[theirs]
            ));
        }
    }
    Ok(())
}

fn pdl_section(
    ctx: &std::sync::Arc<graph_runtime::cudarc::driver::CudaContext>,
    stream: &std::sync::Arc<graph_runtime::cudarc::driver::CudaStream>,
    report: &mut String,
    full: &mut String,
    misses: &mut Vec<String>,
) -> Result {
    let _ = writeln!(
        report,
        "\n## Programmatic dependent launch edges (chains built by the macro; us per node; median of {REPS})\n"
    );
    let _ = writeln!(report, "| chain | device: ordinary / programmatic / launch_order | launch (host): ordinary / programmatic / launch_order | speedup over ordinary: programmatic / launch_order | build+instantiate: ordinary / programmatic / launch_order |\n| --- | --- | --- | --- | --- |");
    let mut table_row = |name: String, rows: &[scaling::Row], nodes: f64| {
        let per = |f: fn(&scaling::Row) -> f64| {
            rows.iter()
                .map(|r| format!("{:.3}", f(r) / nodes))
                .collect::<Vec<_>>()
                .join(" / ")
        };
        let _ = writeln!(
            report,
            "| {name} | {} | {} | {:.2}x / {:.2}x | {} |",
            per(|r| r.device),
            per(|r| r.launch),
            rows[0].device / rows[1].device,
            rows[0].device / rows[2].device,
            per(|r| r.build + r.instantiate),
        );
        let _ = writeln!(full, "PDL {name}: {rows:?}");
    };
    for length in [100, 1000] {
        let rows = pdl::KINDS
            .iter()
            .map(|&kind| pdl::tiny(ctx, stream, kind, length, REPS))
            .collect::<Result<Vec<_>>>()?;
        table_row(format!("tiny x {length}"), &rows, length as f64);
        let launch_order = rows[2].device / length as f64;
        if length == 1000 && launch_order > 0.67 {
            misses.push(format!(
                "PDL tiny chain of 1000: {launch_order:.3} us per node with launch-order edges (target 0.67)"
            ));
        }
    }
    let blocks = pdl::sm_count(ctx)?;
    for work in [1024, 2048, 4096] {
        let mut rows = Vec::new();
        let mut results = Vec::new();
        for kind in pdl::KINDS {
            let (row, bits) = pdl::prologue(ctx, stream, kind, work, REPS)?;
            rows.push(row);
            results.push(bits);
        }
        if results.iter().any(|r| *r != results[0]) {
            return Err(
                format!("PDL prologue chains (work {work}) differ between edge kinds").into(),
            );
        }
        let length = chains::PDL_PROLOGUE_LENGTH;
        table_row(
            format!("prologue {work} steps, {blocks} x 256 threads, x {length}"),
            &rows,
            length as f64,
        );
        let speedup = rows[0].device / rows[2].device;
        if work == 2048 && speedup < 1.8 {
            misses.push(format!(
                "PDL prologue chain: launch-order edges {speedup:.2}x faster per node than ordinary (target 1.8)"
            ));
        }
    }
    let _ = writeln!(report, "\nResults are checked: tiny chains count every kernel; prologue chains are bit-identical across edge kinds and match the host's fused multiply-adds on a sample.");
    Ok(())
}
