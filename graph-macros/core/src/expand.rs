//! Code generation for a checked graph. Never reports user errors (the
//! checker did); on invalid input `fallback` emits the items a caller
//! expects, so later errors stay quiet and completion keeps working.

use crate::check::Topology;
use crate::model::Model;
use crate::parse::GraphDef;
use proc_macro2::TokenStream;
use quote::quote;

/// The expansion of one checked graph.
pub fn graph(model: &Model<'_>, _topology: &Topology) -> TokenStream {
    let labels: Vec<&str> = model
        .nodes
        .iter()
        .filter(|n| matches!(n.origin, crate::model::Origin::Stmt(_)))
        .map(|n| n.name.as_str())
        .collect();
    let dot = crate::dot::render(model);
    outline(model.def, &labels, &dot)
}

/// What a graph expands to when it has errors: the same items, empty.
pub fn fallback(def: &GraphDef) -> TokenStream {
    outline(def, &[], "")
}

fn outline(def: &GraphDef, labels: &[&str], dot: &str) -> TokenStream {
    match &def.name {
        Some(name) => {
            let vis = &def.vis;
            let docs = def.attrs.iter().filter(|a| a.path().is_ident("doc"));
            quote! {
                #(#docs)*
                #vis struct #name {
                    _private: (),
                }

                impl #name {
                    /// The labels of the graph's nodes, in source order.
                    pub const LABELS: &'static [&'static str] = &[#(#labels),*];
                    /// The graph in Graphviz DOT.
                    pub const DOT: &'static str = #dot;
                }
            }
        }
        None => quote! {
            ::graph_runtime::GraphOutline {
                labels: &[#(#labels),*],
                dot: #dot,
            }
        },
    }
}
