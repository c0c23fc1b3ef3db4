// The perf-scaling chain graphs in the DSL, shared by the build scripts of
// graph-bench (the 1,000-long chains) and graph-bench-shapes (the 10- and
// 100-long ones, compiled optimized). Included with `include!`.
//
// Writes `width` parallel chains of `length` tiny kernels. (The DSL has no
// loops; generating its text is how a user would write these shapes.)

/// Writes `width` x `length` chain graphs for every width and length (one
/// graph type per shape), one never-inlined builder per shape, and
/// `build_chain`, which dispatches on the shape.
fn perf_scaling_chains(widths: &[usize], lengths: &[usize], out: &mut String) {
    out.push_str("graph_runtime::cuda_graph! {\n");
    for &width in widths {
        for &length in lengths {
            let params: Vec<String> = (0..width)
                .map(|w| format!("x{w}: &mut CudaSlice<f32>"))
                .collect();
            let _ = writeln!(
                *out,
                "    pub graph ChainW{width}L{length}({}) {{",
                params.join(", ")
            );
            for w in 0..width {
                for l in 0..length {
                    let _ = writeln!(
                        *out,
                        "        c{w}_{l}: kernel kernels::AddOne<<<1, 32>>>(x{w}, 32u32);"
                    );
                }
                let chain: Vec<String> = (0..length).map(|l| format!("c{w}_{l}")).collect();
                if length > 1 {
                    let _ = writeln!(*out, "        {};", chain.join(" -> "));
                }
            }
            out.push_str("    }\n");
        }
    }
    out.push_str("}\n\n");
    // Dispatch by shape, splitting the buffers into one parameter each. One
    // function per shape: unoptimized, a single dispatcher would hold every
    // shape's temporaries (16,000 node handles) in one stack frame, probed
    // on every call, a fixed cost the generated code does not have.
    for &width in widths {
        for &length in lengths {
            let names: Vec<String> = (0..width).map(|w| format!("x{w}")).collect();
            let _ = writeln!(
                *out,
                "#[inline(never)]\nfn build_w{width}_l{length}<'a>(ctx: &std::sync::Arc<graph_runtime::cudarc::driver::CudaContext>, bufs: &'a mut [CudaSlice<f32>]) -> graph_runtime::Result<graph_runtime::Graph<'a>> {{\n    let [{n}] = bufs else {{ panic!(\"{width} buffers\") }};\n    Ok(ChainW{width}L{length}::build(ctx, {n})?.into_graph())\n}}",
                n = names.join(", ")
            );
        }
    }
    out.push_str("/// Builds the `width` x `length` graph over `bufs` (one buffer per chain).\n");
    out.push_str("pub fn build_chain<'a>(ctx: &std::sync::Arc<graph_runtime::cudarc::driver::CudaContext>, bufs: &'a mut [CudaSlice<f32>], width: usize, length: usize) -> graph_runtime::Result<graph_runtime::Graph<'a>> {\n    match (width, length) {\n");
    for &width in widths {
        for &length in lengths {
            let _ = writeln!(
                *out,
                "        ({width}, {length}) => build_w{width}_l{length}(ctx, bufs),"
            );
        }
    }
    out.push_str("        _ => panic!(\"no such shape\"),\n    }\n}\n");
}
