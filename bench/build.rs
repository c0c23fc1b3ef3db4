//! Writes the benchmark's perf-scaling graphs in the DSL: `width` parallel
//! chains of `length` tiny kernels, one graph type per shape. (The DSL has no
//! loops; generating its text is how a user would write these shapes.)

use std::fmt::Write;

const WIDTHS: [usize; 3] = [1, 4, 16];
const LENGTHS: [usize; 3] = [10, 100, 1000];

fn main() {
    let mut out = String::from("graph_runtime::cuda_graph! {\n");
    for width in WIDTHS {
        for length in LENGTHS {
            let params: Vec<String> = (0..width)
                .map(|w| format!("x{w}: &mut CudaSlice<f32>"))
                .collect();
            let _ = writeln!(
                out,
                "    pub graph ChainW{width}L{length}({}) {{",
                params.join(", ")
            );
            for w in 0..width {
                for l in 0..length {
                    let _ = writeln!(
                        out,
                        "        c{w}_{l}: kernel kernels::AddOne<<<1, 32>>>(x{w}, 32u32);"
                    );
                }
                let chain: Vec<String> = (0..length).map(|l| format!("c{w}_{l}")).collect();
                if length > 1 {
                    let _ = writeln!(out, "        {};", chain.join(" -> "));
                }
            }
            out.push_str("    }\n");
        }
    }
    out.push_str("}\n\n");
    // Dispatch by shape, splitting the buffers into one parameter each.
    out.push_str("/// Builds the `width` x `length` graph over `bufs` (one buffer per chain).\n");
    out.push_str("pub fn build_chain<'a>(ctx: &std::sync::Arc<graph_runtime::cudarc::driver::CudaContext>, bufs: &'a mut [CudaSlice<f32>], width: usize, length: usize) -> graph_runtime::Result<graph_runtime::Graph<'a>> {\n    match (width, length) {\n");
    for width in WIDTHS {
        for length in LENGTHS {
            let names: Vec<String> = (0..width).map(|w| format!("x{w}")).collect();
            let _ = writeln!(
                out,
                "        ({width}, {length}) => {{ let [{n}] = bufs else {{ panic!(\"{width} buffers\") }}; Ok(ChainW{width}L{length}::build(ctx, {n})?.into_graph()) }}",
                n = names.join(", ")
            );
        }
    }
    out.push_str("        _ => panic!(\"no such shape\"),\n    }\n}\n");
    let path = std::path::Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("chains.rs");
    std::fs::write(path, out).expect("writing the generated graphs");
    println!("cargo::rerun-if-changed=build.rs");
}
