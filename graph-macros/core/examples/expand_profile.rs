//! The macro's own cost without rustc, for a profiler: parses, checks and
//! expands the synthetic graph of the compile-time benchmark (`bench
//! check`, and the GPU bench's "Macro cost" table) `REPS` times and prints
//! milliseconds per expansion. `scripts/macro-profile` runs it under
//! callgrind, counting `expand_once` only (tokenizing the text is input
//! preparation, as in the benchmarks).
//!
//! `expand_profile [NODES [REPS]]` (default 10,000 nodes, 5 expansions)

/// One parse + check + expand: what callgrind's `--toggle-collect` counts.
#[inline(never)]
fn expand_once(tokens: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    graph_macros_core::expand(tokens)
}

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<usize>().expect("NODES REPS, numbers"));
    let nodes = args.next().unwrap_or(10_000);
    let reps = args.next().unwrap_or(5).max(1);
    let source = graph_macros_core::synthetic::graph_source(nodes / 10);
    let mut ms = Vec::with_capacity(reps);
    for _ in 0..reps {
        let tokens: proc_macro2::TokenStream =
            source.parse().expect("the synthetic graph tokenizes");
        let start = std::time::Instant::now();
        let out = expand_once(tokens);
        ms.push(start.elapsed().as_secs_f64() * 1e3);
        assert!(!out.is_empty(), "an expansion");
    }
    ms.sort_by(f64::total_cmp);
    let tokens: proc_macro2::TokenStream = source.parse().expect("the synthetic graph tokenizes");
    // Not through `expand_once`: callgrind counts the timed expansions only.
    let out = graph_macros_core::expand(tokens);
    // The synthetic graph is valid: its expansion holds no error.
    assert!(
        !out.to_string().contains("compile_error"),
        "the synthetic graph expanded to an error"
    );
    let (emitted, idents) = count(out);
    println!(
        "{nodes} nodes: {:.1} ms per expansion (median of {reps}); {emitted} tokens emitted, \
         {idents} of them identifiers",
        ms[reps / 2]
    );
}

/// Tokens in `stream`, groups' contents included (each group counts as
/// one), and how many are identifiers (each an allocation outside rustc).
fn count(stream: proc_macro2::TokenStream) -> (usize, usize) {
    stream
        .into_iter()
        .fold((0, 0), |(all, idents), tree| match tree {
            proc_macro2::TokenTree::Group(group) => {
                let (inner, inner_idents) = count(group.stream());
                (all + 1 + inner, idents + inner_idents)
            }
            proc_macro2::TokenTree::Ident(_) => (all + 1, idents + 1),
            _ => (all + 1, idents),
        })
}
