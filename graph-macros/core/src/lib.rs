//! The compile-time half of `cuda_graph!`: parse, lower to a model, check,
//! expand. Plain library code, so unit tests, the property tests and the
//! benchmark call it directly; the proc-macro crate is a thin entry over
//! [`expand()`].
//!
//! ```
//! let input: proc_macro2::TokenStream = "
//!     graph Pipeline(x: &Buf) {
//!         a: kernel k::A<<<1, 32>>>(x);
//!         b: kernel k::B<<<1, 32>>>(x);
//!         a -> b;
//!     }"
//!     .parse()
//!     .unwrap();
//! assert!(graph_macros_core::analyze(input).is_ok());
//! ```
// Every fallible public function says how it fails (`# Errors`).
#![warn(clippy::missing_errors_doc)]

pub mod check;
pub mod diag;
pub mod dot;
pub mod expand;
pub mod model;
pub mod parse;
#[doc(hidden)]
pub mod synthetic;

use proc_macro2::TokenStream;

/// Expands a `cuda_graph!` invocation: the generated items, or the errors as
/// `compile_error!`s next to a fallback expansion.
pub fn expand(input: TokenStream) -> TokenStream {
    let (parsed, syntax_errors) = match parse::parse_input(input) {
        Ok(parsed) => parsed,
        Err(errors) => {
            return diag::combine(errors)
                .map(|e| e.to_compile_error())
                .unwrap_or_default()
        }
    };
    let (graphs, duplicates) = distinct_graphs(&parsed);
    // Reported once, with the first graph left broken (inside the block of
    // the expression form).
    let mut syntax = diag::combine(syntax_errors).map(|e| e.to_compile_error());
    let mut out: TokenStream = duplicates
        .iter()
        .map(syn::Error::to_compile_error)
        .collect();
    for def in graphs {
        let errors = if def.broken {
            // A statement was left out: its errors stand alone, and the
            // graph's type is declared for the code that uses it.
            syntax.take().unwrap_or_default()
        } else {
            let diag = diag::Diagnostics::new();
            let model = model::lower(def, &diag);
            let topology = check::check(&model, &diag);
            match diag.finish() {
                Ok(()) => {
                    out.extend(expand::graph(&model, &topology));
                    continue;
                }
                Err(errors) => errors.to_compile_error(),
            }
        };
        let fallback = expand::fallback(def);
        if def.name.is_some() {
            out.extend(errors);
            out.extend(fallback);
        } else {
            out.extend(quote::quote!({ #errors #fallback }));
        }
    }
    // A broken graph of a name defined twice was not expanded.
    out.extend(syntax);
    out
}

/// Parses and checks an invocation without generating code: every error of
/// the input, combined.
///
/// # Errors
/// Every error the parser and the checker report, combined.
pub fn analyze(input: TokenStream) -> Result<(), syn::Error> {
    let (parsed, mut all) = parse::parse_input(input).map_err(|errors| {
        diag::combine(errors)
            .unwrap_or_else(|| syn::Error::new(proc_macro2::Span::call_site(), "invalid input"))
    })?;
    let (graphs, duplicates) = distinct_graphs(&parsed);
    all.extend(duplicates);
    for def in graphs.into_iter().filter(|def| !def.broken) {
        let diag = diag::Diagnostics::new();
        let model = model::lower(def, &diag);
        check::check(&model, &diag);
        if let Err(e) = diag.finish() {
            all.push(e);
        }
    }
    match diag::combine(all) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The invocation's graphs, each name once: a second graph of one name is
/// an error at its name, and is not expanded (its items would clash with
/// the first's, in errors about generated names).
fn distinct_graphs(parsed: &parse::Input) -> (Vec<&parse::GraphDef>, Vec<syn::Error>) {
    let items = match parsed {
        parse::Input::Items(items) => items,
        parse::Input::Expr(def) => return (vec![def], Vec::new()),
    };
    let mut seen: Vec<&syn::Ident> = Vec::new();
    let (mut graphs, mut errors) = (Vec::new(), Vec::new());
    // Graphs under `#[cfg]` may share a name (`#[cfg(feature = "x")]` and
    // `#[cfg(not(feature = "x"))]`): rustc reports a pair compiled in together.
    let has_cfg = |def: &parse::GraphDef| def.attrs.iter().any(|a| a.path().is_ident("cfg"));
    for def in items {
        if let Some(name) = &def.name.as_ref().filter(|_| !has_cfg(def)) {
            if seen.contains(name) {
                errors.push(syn::Error::new(
                    name.span(),
                    diag::with_help(
                        format!("graph `{name}` is defined twice in this invocation"),
                        format!("each graph defines the type `{name}` (and `{name}Exec`); rename one of them"),
                    ),
                ));
                continue;
            }
            seen.push(name);
        }
        graphs.push(def);
    }
    (graphs, errors)
}
