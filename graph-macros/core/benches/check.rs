//! Compile-time cost of the macro: parse + check + expand of generated
//! graphs with allocations, alloc scopes and conditionals.
//!
//! `cargo bench -p graph-macros-core --bench check`

fn main() {
    divan::main();
}

#[divan::bench(args = [100, 1_000, 10_000], sample_count = 10, sample_size = 1)]
fn parse_check_expand(bencher: divan::Bencher<'_, '_>, nodes: usize) {
    let source = graph_macros_core::synthetic::graph_source(nodes / 10);
    // Tokenizing the text is input preparation, not timed.
    bencher
        .with_inputs(|| {
            source
                .parse::<proc_macro2::TokenStream>()
                .expect("synthetic graph tokenizes")
        })
        .bench_values(|tokens| graph_macros_core::expand(tokens).is_empty());
}

#[divan::bench(args = [100, 1_000, 10_000], sample_count = 10, sample_size = 1)]
fn parse_and_check_only(bencher: divan::Bencher<'_, '_>, nodes: usize) {
    let source = graph_macros_core::synthetic::graph_source(nodes / 10);
    // Tokenizing the text is input preparation, not timed.
    bencher
        .with_inputs(|| {
            source
                .parse::<proc_macro2::TokenStream>()
                .expect("synthetic graph tokenizes")
        })
        .bench_values(|tokens| graph_macros_core::analyze(tokens).is_ok());
}
