//! Code generation for a checked graph. Never reports user errors (the
//! checker did); on invalid input `fallback` emits the items a caller
//! expects, so later errors stay quiet and completion keeps working.
//!
//! The graph is built through graph-runtime calls in a deterministic order:
//! per graph level, nodes in topological order, ties broken by source order
//! (so source order wherever the edges allow), dependencies in edge order.
//! Two builds of one graph type therefore always have the same topology.

mod expression;
mod item;
mod level;

use crate::check::Topology;
use crate::model::Model;
use crate::parse::GraphDef;
use proc_macro2::TokenStream;

/// The expansion of one checked graph.
pub fn graph(model: &Model<'_>, topology: &Topology) -> TokenStream {
    let out = match model.def.name {
        Some(_) => cfg_items(model.def, item::expand(model, topology)),
        None => expression::expand(model, topology),
    };
    in_runtime(model.def, out)
}

/// What a graph with errors expands to: the same items with bodies that are
/// never reached (the crate does not compile).
pub fn fallback(def: &GraphDef) -> TokenStream {
    let out = match &def.name {
        Some(_) => cfg_items(def, item::fallback(def)),
        None => expression::fallback(),
    };
    in_runtime(def, out)
}

/// Generated code names the runtime `::__cuda_graph_runtime` (a marker no
/// user writes), replaced here by `::graph_runtime` or the graph's
/// `#[crate_path = path]` (a renamed dependency, a re-export), spanned
/// where the marker was. The user's own tokens are never rewritten.
fn in_runtime(def: &GraphDef, out: TokenStream) -> TokenStream {
    let path = def
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("crate_path"))
        .find_map(|a| crate::model::attrs::crate_path(a).ok());
    let path = match path {
        Some(path) => quote::ToTokens::to_token_stream(&path),
        None => quote::quote!(::graph_runtime),
    };
    replace_marker(out, &path)
}

/// The marker of the runtime's path in generated code.
const RUNTIME_MARKER: &str = "__cuda_graph_runtime";

/// `tokens` with each `::__cuda_graph_runtime` (at any depth) replaced by
/// `path`.
fn replace_marker(tokens: TokenStream, path: &TokenStream) -> TokenStream {
    use proc_macro2::{Group, Spacing, TokenTree};
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::with_capacity(trees.len());
    let mut i = 0;
    while i < trees.len() {
        if let (TokenTree::Punct(a), Some(TokenTree::Punct(b)), Some(TokenTree::Ident(name))) =
            (&trees[i], trees.get(i + 1), trees.get(i + 2))
        {
            if a.as_char() == ':'
                && a.spacing() == Spacing::Joint
                && b.as_char() == ':'
                && name == RUNTIME_MARKER
            {
                out.extend(path.clone().into_iter().map(|mut t| {
                    t.set_span(name.span());
                    t
                }));
                i += 3;
                continue;
            }
        }
        match &trees[i] {
            TokenTree::Group(g) => {
                let mut group = Group::new(g.delimiter(), replace_marker(g.stream(), path));
                group.set_span(g.span());
                out.push(TokenTree::Group(group));
            }
            other => out.push(other.clone()),
        }
        i += 1;
    }
    out.into_iter().collect()
}

/// A named graph's items, each under the graph's `#[cfg(..)]` attributes
/// (so a graph compiled out leaves no item behind, and none that names it).
fn cfg_items(def: &GraphDef, items: TokenStream) -> TokenStream {
    let cfgs: Vec<&syn::Attribute> = def
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect();
    if cfgs.is_empty() {
        return items;
    }
    let Ok(file) = syn::parse2::<syn::File>(items.clone()) else {
        // Not reached with syn's full grammar; never compile the graph in
        // silently where its `#[cfg]` could not be applied.
        return quote::quote! {
            ::core::compile_error!("cuda_graph!: could not apply the graph's #[cfg] to its items");
        };
    };
    file.items
        .into_iter()
        .map(|item| quote::quote! { #(#cfgs)* #item })
        .collect()
}
