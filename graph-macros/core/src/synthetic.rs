//! Synthetic graphs of a chosen size, with allocations, alloc scopes and
//! conditionals, for the compile-time benchmark and the scaling tests.

use std::fmt::Write;

/// Source of an item-form graph with `blocks * 10` nodes. Each block holds an
/// alloc node, a kernel setting a handle, an `if` with one body kernel, two
/// kernels using the buffer, its free node, and an alloc scope with one
/// kernel; blocks are chained and their kernels linked across blocks.
pub fn graph_source(blocks: usize) -> String {
    let mut s = String::from("graph Synthetic(x: &Buf, n: usize) {\n");
    for i in 0..blocks {
        let _ = write!(
            s,
            "cond h{i};\n\
             b{i}_buf: alloc f32[n];\n\
             b{i}_k0: kernel k::K<<<1, 32>>>(b{i}_buf, h{i});\n\
             b{i}_if: if h{i} {{ b{i}_t0: kernel k::K<<<1, 32>>>(x); }}\n\
             b{i}_k1: kernel k::K<<<1, 32>>>(b{i}_buf, x);\n\
             b{i}_k2: kernel k::K<<<1, 32>>>(b{i}_buf);\n\
             b{i}_free: free b{i}_buf;\n\
             alloc b{i}_s: f32[64] {{ b{i}_sk: kernel k::K<<<1, 32>>>(b{i}_s, x); }}\n\
             b{i}_buf -> b{i}_k0 -> b{i}_if -> b{i}_k1 -> b{i}_free -> b{i}_s;\n\
             b{i}_k0 -> b{i}_k2 -> b{i}_free;\n"
        );
        if i > 0 {
            let p = i - 1;
            let _ = writeln!(s, "b{p}_s -> b{i}_buf;\nb{p}_k2 -> b{i}_k2;");
        }
    }
    s.push_str("}\n");
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn synthetic_graphs_check_clean() {
        for blocks in [1, 10, 100] {
            let tokens = super::graph_source(blocks).parse().unwrap();
            if let Err(e) = crate::analyze(tokens) {
                panic!(
                    "{:?}",
                    e.into_iter().map(|e| e.to_string()).collect::<Vec<_>>()
                );
            }
        }
    }

    /// A guard against quadratic behaviour, not a timing: the checker and
    /// expansion are linear, and 10,000 nodes take about 2.4 s in this
    /// debug build; quadratic work would take minutes, so 20 s flags it
    /// even on a loaded CI machine. The benchmark (`bench check`) gives the
    /// real, release-build figures (under 0.5 s).
    #[test]
    fn ten_thousand_nodes_expand_in_linear_time() {
        let tokens: proc_macro2::TokenStream = super::graph_source(1_000).parse().unwrap();
        let start = std::time::Instant::now();
        let out = crate::expand(tokens);
        let took = start.elapsed();
        assert!(!out.is_empty());
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "10,000 nodes expanded in {took:?} (debug build)"
        );
        assert!(took.as_secs() < 20, "quadratic? took {took:?}");
    }
}
