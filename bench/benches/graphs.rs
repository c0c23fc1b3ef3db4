//! `cargo bench -p graph-bench`: runs every workload, prints the tables
//! (markdown, as in BENCHMARKS.md), and writes them to $OUT/benchmarks.md
//! when OUT is set (the device machine), else target/benchmarks.md.
//! `GRAPH_BENCH_ONLY=scaling` stops after the macro-cost and scaling tables
//! and the build breakdown
//! (about a minute on the H200: enough to compare two builds of the
//! runtime's node-adding path); `GRAPH_BENCH_ONLY=launch_loop` runs the
//! updates and launch-loop tables alone.

fn main() {
    match graph_bench::run().map_err(|e| e.to_string()) {
        Ok(report) => {
            println!("{report}");
            let dir = std::env::var_os("OUT")
                .map_or_else(|| std::path::PathBuf::from("target"), Into::into);
            let path = dir.join("benchmarks.md");
            if let Err(e) = std::fs::write(&path, &report) {
                eprintln!("could not write {}: {e}", path.display());
            }
        }
        Err(e) => {
            eprintln!("benchmark failed: {e}");
            std::process::exit(1);
        }
    }
}
