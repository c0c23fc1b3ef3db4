//! Writes the benchmark's graphs in the DSL: the perf-scaling chains of
//! 1,000 (the 10- and 100-long ones are in graph-bench-shapes, compiled
//! optimized), and the chains of PDL-aware kernels joined by each kind of
//! edge. (The DSL has no loops; generating its text is how a user would
//! write these shapes.)

use std::fmt::Write;

include!("chains_gen.rs");

fn main() {
    let mut out = String::new();
    perf_scaling_chains(&[1, 4, 16], &[1000], &mut out);
    pdl_chains(&mut out);
    let path = std::path::Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("chains.rs");
    std::fs::write(path, out).expect("writing the generated graphs");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=chains_gen.rs");
}

/// Edge kinds of the PDL chains: type-name part, `EdgeKind` variant and the
/// attribute that marks the chain statement.
const EDGE_KINDS: [(&str, &str, &str); 3] = [
    ("Ordinary", "Full", ""),
    ("Programmatic", "Programmatic", "#[programmatic] "),
    ("LaunchOrder", "LaunchOrder", "#[launch_order] "),
];
const PDL_TINY_LENGTHS: [usize; 2] = [100, 1000];
const PDL_PROLOGUE_LENGTH: usize = 100;

/// Chains of `PdlAddOne` (1 x 32 threads) and of `PdlPrologueStep` (one
/// block of 256 threads per SM), one graph type per edge kind and length,
/// plus `build_pdl_tiny` / `build_pdl_prologue` dispatching on them.
fn pdl_chains(out: &mut String) {
    out.push_str("\ngraph_runtime::cuda_graph! {\n");
    let chain = |prefix: &str, length: usize| -> String {
        (0..length)
            .map(|l| format!("{prefix}{l}"))
            .collect::<Vec<_>>()
            .join(" -> ")
    };
    for (kind, _, attr) in EDGE_KINDS {
        for length in PDL_TINY_LENGTHS {
            let _ = writeln!(
                out,
                "    pub graph PdlTiny{kind}L{length}(x: &mut CudaSlice<f32>) {{"
            );
            for l in 0..length {
                let _ = writeln!(
                    out,
                    "        t{l}: kernel kernels::PdlAddOne<<<1, 32>>>(x, 32u32);"
                );
            }
            let _ = writeln!(out, "        {attr}{};\n    }}", chain("t", length));
        }
        let length = PDL_PROLOGUE_LENGTH;
        let _ = writeln!(
            out,
            "    pub graph PdlPrologue{kind}L{length}(x: &mut CudaSlice<f32>, blocks: u32, n: u32, work: u32) {{"
        );
        for l in 0..length {
            let _ = writeln!(
                out,
                "        p{l}: kernel kernels::PdlPrologueStep<<<blocks, 256>>>(x, n, work);"
            );
        }
        let _ = writeln!(out, "        {attr}{};\n    }}", chain("p", length));
    }
    out.push_str("}\n\n");
    out.push_str("/// Builds the chain of `length` `PdlAddOne` kernels joined by `kind` edges.\n");
    out.push_str("pub fn build_pdl_tiny<'a>(ctx: &std::sync::Arc<graph_runtime::cudarc::driver::CudaContext>, x: &'a mut CudaSlice<f32>, kind: graph_runtime::EdgeKind, length: usize) -> graph_runtime::Result<graph_runtime::Graph<'a>> {\n    match (kind, length) {\n");
    for (kind, variant, _) in EDGE_KINDS {
        for length in PDL_TINY_LENGTHS {
            let _ = writeln!(
                out,
                "        (graph_runtime::EdgeKind::{variant}, {length}) => build_pdl_tiny_{}_{length}(ctx, x),", kind.to_lowercase()
            );
        }
    }
    out.push_str("        _ => panic!(\"no such PDL chain\"),\n    }\n}\n");
    for (kind, _, _) in EDGE_KINDS {
        for length in PDL_TINY_LENGTHS {
            let _ = writeln!(
                out,
                "#[inline(never)]\nfn build_pdl_tiny_{lower}_{length}<'a>(ctx: &std::sync::Arc<graph_runtime::cudarc::driver::CudaContext>, x: &'a mut CudaSlice<f32>) -> graph_runtime::Result<graph_runtime::Graph<'a>> {{\n    Ok(PdlTiny{kind}L{length}::build(ctx, x)?.into_graph())\n}}",
                lower = kind.to_lowercase()
            );
        }
    }
    let _ = writeln!(
        out,
        "/// The length of the prologue-heavy PDL chains.\npub const PDL_PROLOGUE_LENGTH: usize = {PDL_PROLOGUE_LENGTH};"
    );
    out.push_str("/// Builds the chain of `PdlPrologueStep` kernels joined by `kind` edges.\n");
    out.push_str("pub fn build_pdl_prologue<'a>(ctx: &std::sync::Arc<graph_runtime::cudarc::driver::CudaContext>, x: &'a mut CudaSlice<f32>, kind: graph_runtime::EdgeKind, blocks: u32, n: u32, work: u32) -> graph_runtime::Result<graph_runtime::Graph<'a>> {\n    match kind {\n");
    for (kind, variant, _) in EDGE_KINDS {
        let _ = writeln!(
            out,
            "        graph_runtime::EdgeKind::{variant} => Ok(PdlPrologue{kind}L{PDL_PROLOGUE_LENGTH}::build(ctx, x, blocks, n, work)?.into_graph()),"
        );
    }
    // EdgeKind is non_exhaustive.
    out.push_str("        other => unreachable!(\"no chain of {other:?} edges\"),\n");
    out.push_str("    }\n}\n");
}
