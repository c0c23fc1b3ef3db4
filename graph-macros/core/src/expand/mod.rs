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
    match model.def.name {
        Some(_) => cfg_items(model.def, item::expand(model, topology)),
        None => expression::expand(model, topology),
    }
}

/// What a graph with errors expands to: the same items with bodies that are
/// never reached (the crate does not compile).
pub fn fallback(def: &GraphDef) -> TokenStream {
    match &def.name {
        Some(_) => cfg_items(def, item::fallback(def)),
        None => expression::fallback(),
    }
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
