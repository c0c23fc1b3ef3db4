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

/// The expansion with `::graph_runtime` replaced by the graph's
/// `#[crate_path = path]`, where it has one: generated code names the
/// runtime by absolute path, which a crate that renamed the dependency
/// must redirect.
fn in_runtime(def: &GraphDef, out: TokenStream) -> TokenStream {
    let path = def
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("crate_path"))
        .find_map(|a| crate::model::attrs::crate_path(a).ok());
    match path {
        Some(path) => replace_runtime(out, &quote::ToTokens::to_token_stream(&path)),
        None => out,
    }
}

/// `tokens` with each `::graph_runtime` (at any depth) replaced by `path`.
fn replace_runtime(tokens: TokenStream, path: &TokenStream) -> TokenStream {
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
                && name == "graph_runtime"
            {
                out.extend(path.clone());
                i += 3;
                continue;
            }
        }
        match &trees[i] {
            TokenTree::Group(g) => {
                let mut group = Group::new(g.delimiter(), replace_runtime(g.stream(), path));
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
        return items; // never: the items are ours
    };
    file.items
        .into_iter()
        .map(|item| quote::quote! { #(#cfgs)* #item })
        .collect()
}
