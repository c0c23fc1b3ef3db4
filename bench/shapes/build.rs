//! Writes the perf-scaling chains of 10 and 100 tiny kernels in the DSL
//! (see ../chains_gen.rs). These are compiled optimized; the 1,000-long ones
//! stay in graph-bench, where LLVM's optimizer would take too long.

use std::fmt::Write;

include!("../chains_gen.rs");

fn main() {
    let mut out = String::new();
    perf_scaling_chains(&[1, 4, 16], &[10, 100], &mut out);
    let path = std::path::Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("chains.rs");
    std::fs::write(path, out).expect("writing the generated graphs");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=../chains_gen.rs");
}
