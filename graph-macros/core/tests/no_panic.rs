//! The macro never panics: random token streams and random mutations of
//! valid graphs go through parse, check and expand.
//!
//! CI runs a short pass. The long run (documented in tests/README.md):
//! `PROPTEST_CASES=100000 cargo test --release -p graph-macros-core --test no_panic`

use proptest::prelude::*;
#[path = "common/proptest_config.rs"]
mod proptest_config;
use proptest_config::config;
use std::cell::Cell;

const VOCABULARY: &[&str] = &[
    "a",
    "b",
    "c",
    "buf",
    "go",
    "x",
    "n",
    "kernel",
    "copy",
    "fill",
    "host",
    "empty",
    "graph",
    "record",
    "wait",
    "capture",
    "alloc",
    "free",
    "cond",
    "if",
    "else",
    "while",
    "switch",
    "programmatic",
    "launch_order",
    "escape",
    "disabled",
    "disjoint",
    "priority",
    "device_launch",
    "auto_free_on_launch",
    "crate_path",
    "cfg",
    "derive",
    "pub",
    "move",
    "k::K",
    // Raw identifiers: every name the DSL turns into generated names.
    "r#a",
    "r#alloc",
    "r#x",
    "r#i",
    ":",
    ";",
    "->",
    "-",
    "=>",
    "=",
    ",",
    "<",
    ">",
    "<<<",
    ">>>",
    "#",
    "::",
    "|",
    "||",
    "&",
    "*",
    "0",
    "1",
    "2",
    "1.0f32",
    "\"s\"",
    "f32",
    "u8",
    "for",
    "in",
    "let",
    "..",
    "i",
    "w",
    "[",
    "]",
    "+",
];

const VALID: &[&str] = &[
    "graph B(x: &mut CudaSlice<f32>, n: usize) { #[disjoint(x)] l: for w in 0..n { s: kernel k::K<<<w as u32 + 1, 32>>>(x.slice(w..w + 1)); } a: fill { let w = 0usize; x.slice(w..) } = 0.0f32; b: fill (|w: usize| x.slice(w..))(1) = 0.0f32; l -> a -> b; }",
    "#[cfg(feature = \"x\")] #[crate_path = ::rt] graph G(x: &mut CudaSlice<f32>) { k: kernel k::K<<<1, 32>>>(x); }",
    "#[crate_path = crate::rt] graph(ctx) { k: kernel k::K<<<1, 32>>>(&mut x); }",
    "graph G(x: &T, n: u32) { cond go; s: kernel k::SET<<<1, 1>>>(go); i: if go { a: kernel k::K<<<1, 32>>>(x); } else { b: empty; } s -> i; }",
    "graph G(n: usize) { buf: alloc f32[n]; k1: kernel k::K<<<1, 32>>>(buf); done: free buf; buf -> k1 -> done; }",
    "graph G() { alloc s: u8[4] { k: kernel k::K<<<1, 1>>>(s); alloc t: u8[2] { j: fill t = 0u8; } k -> t; } e: empty; s -> e; }",
    "#[device_launch] pub graph G(x: &T) { z: fill x = 0; k: kernel k::K<<<(1, 2, 3), 32, 64>>>(x); c: copy x => x; z -> k -> c; }",
    "graph(&ctx) { cond c = 0; cond c2 = 1; w: while c { s: kernel k::K<<<1, 1>>>(c); cond d = 1; i: if d { q: empty; } s -> i; } m: switch c2 { 0 => { a: empty; } 1 => { b: empty; } } }",
    "#[use_node_priority] graph G() { #[priority(1)] a: kernel k::K<<<1,1>>>(); b: kernel k::K<<<1,1>>>(); a -(programmatic)-> b; a -> [c, d] -(launch_order)-> e; #[disabled] c: kernel k::K<<<1,1>>>(); d: kernel k::K<<<1,1>>>(); e: kernel k::K<<<1,1>>>(); h: host move || (); r: record ev; w: wait ev; g: graph child; p: unsafe capture(&st) |s| { lib(s) }; }",
    "graph R(x: &mut CudaSlice<f32>, y: &CudaSlice<f32>) { cond h; s: kernel k::S<<<1,1>>>(h); #[disjoint(x)] a: fill x = 0.0f32; b: copy y => x; s -> b; i: if h { c: kernel k::K<<<1,32>>>(x, y); } else { #[disjoint] d: fill x = 1.0f32; } b -> i; }",
    "graph P(x: &mut CudaSlice<f32>) { a: kernel k::P<<<1,32>>>(x); b: kernel k::P<<<1,32>>>(x); c: kernel k::P<<<1,32>>>(x); #[launch_order] a -> b -> c; #[programmatic] [a] -> c; }",
    "graph L(xs: &mut [CudaSlice<f32>], n: usize) { z: empty; #[disjoint(xs)] lanes: for w in 0..xs.len() { chain: for i in 0..n { s: kernel k::K<<<1, 32>>>(xs[w], 32u32); s[i-1] -> s; } } e: empty; z -> lanes -> e; }",
    "graph M(x: &mut CudaSlice<f32>, n: u32) { layer: for l in 0..n { cond go = 1; alloc t: f32[32] { a: kernel k::K<<<1,32>>>(t, x); } m: if go { b: kernel k::K<<<1,32>>>(x); } t -> m; m[l-1] -> t; } }",
    "graph D(x: &mut CudaSlice<f32>, n: u32) { buffer acc: f32[n]; buffer flag: u8[1]; c: fill acc = 0.0f32; #[disjoint(acc)] t: for i in 0..n { k: kernel k::K<<<1,1>>>(acc.slice(i..i + 1)); } o: copy acc => x; z: fill flag = 0u8; c -> t -> o; }",
    "graph H(x: &mut CudaSlice<f32>, n: u32) { host seen: f32[n]; host f: f32[1]; d: copy x => seen; s: host move |seen: &[f32]| drop(seen); w: host |f: &mut [f32]| f[0] = 1.0; u: copy f => x; d -> s; [d, w] -> u; }",
    "graph F(x: &mut CudaSlice<f32>, n: usize) { fragment f { b: fill x = 0.0f32; c: empty; b -> c; } p: use f; q: use f; p -> q; l: for i in 0..n { r: use f; r[i-1] -> r; } q -> l; }",
    "graph W(x: &mut CudaSlice<f32>, c: &mut CudaSlice<i32>, n: usize) { cond again = 1; o: while again { r: for s in 0..n { a: kernel k::K<<<1,32>>>(x); #[programmatic] a[s-1] -> a; } st: kernel k::S<<<1,1>>>(again, c); r -> st; } }",
];

/// A token-ish text: a vocabulary word, or a group of them nested to `depth`.
fn piece(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop::sample::select(VOCABULARY).prop_map(str::to_string);
    if depth == 0 {
        return leaf.boxed();
    }
    prop_oneof![
        6 => leaf,
        1 => (prop::sample::select(&[("{", "}"), ("(", ")"), ("[", "]")][..]),
              prop::collection::vec(piece(depth - 1), 0..8))
            .prop_map(|((open, close), inner)| format!("{open} {} {close}", inner.join(" "))),
    ]
    .boxed()
}

/// Splits a source into flat tokens (delimiters separate), so mutations can
/// unbalance groups too (such inputs do not tokenize and are skipped).
fn flat_tokens(source: &str) -> Vec<String> {
    fn walk(tokens: proc_macro2::TokenStream, out: &mut Vec<String>) {
        for tt in tokens {
            match tt {
                proc_macro2::TokenTree::Group(g) => {
                    let (open, close) = match g.delimiter() {
                        proc_macro2::Delimiter::Brace => ("{", "}"),
                        proc_macro2::Delimiter::Parenthesis => ("(", ")"),
                        proc_macro2::Delimiter::Bracket => ("[", "]"),
                        proc_macro2::Delimiter::None => ("", ""),
                    };
                    out.push(open.to_string());
                    walk(g.stream(), out);
                    out.push(close.to_string());
                }
                proc_macro2::TokenTree::Punct(p) => {
                    let joint = p.spacing() == proc_macro2::Spacing::Joint;
                    let text = p.as_char().to_string();
                    match out.last_mut() {
                        Some(last) if last.ends_with('\u{0}') => {
                            last.pop();
                            last.push_str(&text);
                        }
                        _ => out.push(text),
                    }
                    if joint {
                        if let Some(last) = out.last_mut() {
                            last.push('\u{0}');
                        }
                    }
                }
                other => out.push(other.to_string()),
            }
        }
    }
    let mut out = Vec::new();
    walk(source.parse().expect("corpus tokenizes"), &mut out);
    out.into_iter()
        .map(|t| t.trim_end_matches('\u{0}').to_string())
        .collect()
}

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize),
    Duplicate(usize),
    Swap(usize, usize),
    Replace(usize, &'static str),
    Insert(usize, &'static str),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let index = 0usize..400;
    let word = prop::sample::select(VOCABULARY);
    prop_oneof![
        index.clone().prop_map(Mutation::Delete),
        index.clone().prop_map(Mutation::Duplicate),
        (index.clone(), index.clone()).prop_map(|(i, j)| Mutation::Swap(i, j)),
        (index.clone(), word.clone()).prop_map(|(i, w)| Mutation::Replace(i, w)),
        (index, word).prop_map(|(i, w)| Mutation::Insert(i, w)),
    ]
}

fn apply(tokens: &mut Vec<String>, mutation: &Mutation) {
    let len = tokens.len().max(1);
    match *mutation {
        Mutation::Delete(i) if !tokens.is_empty() => {
            tokens.remove(i % len);
        }
        Mutation::Duplicate(i) if !tokens.is_empty() => {
            let t = tokens[i % len].clone();
            tokens.insert(i % len, t);
        }
        Mutation::Swap(i, j) if !tokens.is_empty() => tokens.swap(i % len, j % len),
        Mutation::Replace(i, w) if !tokens.is_empty() => tokens[i % len] = w.to_string(),
        Mutation::Insert(i, w) => tokens.insert(i % (tokens.len() + 1), w.to_string()),
        _ => {}
    }
}

/// Runs `strategy`'s inputs through the macro and reports how many there
/// were and how far they got; a panic fails the test with its input.
fn fuzz<S: Strategy>(name: &str, strategy: S, to_source: impl Fn(&S::Value) -> String) {
    let mut runner = proptest::test_runner::TestRunner::new(config());
    let (inputs, tokenized, clean) = (Cell::new(0usize), Cell::new(0usize), Cell::new(0usize));
    let bump = |c: &Cell<usize>| c.set(c.get() + 1);
    let result = runner.run(&strategy, |value| {
        bump(&inputs);
        let source = to_source(&value);
        if let Ok(tokens) = source.parse::<proc_macro2::TokenStream>() {
            bump(&tokenized);
            if graph_macros_core::analyze(tokens.clone()).is_ok() {
                bump(&clean);
            }
            let _ = graph_macros_core::expand(tokens);
        }
        Ok(())
    });
    let (inputs, tokenized, clean) = (inputs.get(), tokenized.get(), clean.get());
    eprintln!("{name}: {inputs} inputs, {tokenized} tokenized, {clean} checked clean, 0 panics");
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
}

#[test]
fn random_token_streams() {
    fuzz(
        "random token streams",
        (prop::collection::vec(piece(3), 0..40), any::<bool>()),
        |(body, wrap)| {
            let body = body.join(" ");
            if *wrap {
                format!("graph G(x: &T) {{ {body} }}")
            } else {
                body
            }
        },
    );
}

#[test]
fn mutated_valid_graphs() {
    fuzz(
        "mutated valid graphs",
        (0..VALID.len(), prop::collection::vec(mutation(), 1..5)),
        |(which, mutations)| {
            let mut tokens = flat_tokens(VALID[*which]);
            for m in mutations {
                apply(&mut tokens, m);
            }
            tokens.join(" ")
        },
    );
}

#[test]
fn corpus_is_valid_or_fails_cleanly() {
    for source in VALID {
        let tokens: proc_macro2::TokenStream = source.parse().expect("corpus tokenizes");
        let expanded = graph_macros_core::expand(tokens);
        syn::parse2::<syn::File>(expanded.clone())
            .or_else(|_| syn::parse2::<syn::Expr>(expanded).map(|_| syn::parse_quote!()))
            .expect("expansion is valid Rust");
    }
}

#[test]
fn corpus_checks_clean() {
    for source in VALID {
        let tokens: proc_macro2::TokenStream = source.parse().expect("corpus tokenizes");
        if let Err(e) = graph_macros_core::analyze(tokens) {
            panic!(
                "{source}\n{:?}",
                e.into_iter().map(|e| e.to_string()).collect::<Vec<_>>()
            );
        }
    }
}

/// Each identifier of each valid graph written raw (`r#name`), and
/// replaced by a raw keyword (`r#type`), one at a time: generated names
/// are made from labels, and a raw one once made an invalid identifier
/// (a panic). Random mutations seldom hit a label.
#[test]
fn raw_identifiers_anywhere_in_valid_graphs() {
    for source in VALID {
        let tokens = flat_tokens(source);
        for (i, token) in tokens.iter().enumerate() {
            let rawable = token.chars().next().is_some_and(|c| c.is_alphabetic())
                && token.chars().all(|c| c.is_alphanumeric() || c == '_')
                && !["self", "Self", "super", "crate"].contains(&token.as_str());
            if !rawable {
                continue;
            }
            for raw in [format!("r#{token}"), "r#type".to_string()] {
                let mut mutated = tokens.clone();
                mutated[i] = raw;
                let text = mutated.join(" ");
                let Ok(stream) = text.parse::<proc_macro2::TokenStream>() else {
                    continue;
                };
                let expanded = std::panic::catch_unwind(|| graph_macros_core::expand(stream));
                assert!(expanded.is_ok(), "the macro panicked on:\n{text}");
            }
        }
    }
}
