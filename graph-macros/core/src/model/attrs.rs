//! Graph and node attributes (`#[device_launch]`, `#[escape]`, ...).

use super::{GraphAttrs, NodeAttrs};
use crate::diag::Diagnostics;
use proc_macro2::Span;
use quote::ToTokens;
use syn::Ident;

pub(super) fn graph_attrs(attrs: &[syn::Attribute], named: bool, diag: &Diagnostics) -> GraphAttrs {
    let mut out = GraphAttrs::default();
    let mut crate_path_seen = false;
    for attr in attrs {
        let path = attr.path();
        if path.is_ident("cfg") {
            // Put on every generated item by `expand::cfg_items`.
            if !named {
                diag.error_with_help(
                    path,
                    "`#[cfg]` applies to a named graph's items; this graph is an expression",
                    "put the `#[cfg]` on the statement or item that holds the `cuda_graph!` expression",
                );
            }
            continue;
        }
        if path.is_ident("crate_path") {
            // Read again by `expand::crate_path`; checked here.
            if std::mem::replace(&mut crate_path_seen, true) {
                diag.error(attr, "duplicate graph attribute");
            }
            if let Err(e) = crate_path(attr) {
                diag.push(e);
            }
            continue;
        }
        if path.is_ident("derive") {
            diag.error_with_help(
                path,
                "a graph's generated types cannot take `#[derive]`",
                "they derive `Debug`; a graph and its exec own driver objects, so they are neither `Clone` nor comparable",
            );
            continue;
        }
        let slot = if path.is_ident("device_launch") {
            &mut out.device_launch
        } else if path.is_ident("auto_free_on_launch") {
            &mut out.auto_free_on_launch
        } else if path.is_ident("use_node_priority") {
            &mut out.use_node_priority
        } else if path.is_ident("doc") || path.is_ident("allow") {
            out.passthrough.push(attr.clone());
            continue;
        } else if path.is_ident("cfg_attr") {
            // It goes on the graph's type only: what it carries must make
            // sense there alone (a `cfg` or `derive` would split the items).
            if let Err(e) = cfg_attr_carries_docs_and_lints(attr) {
                diag.push(e);
            } else {
                out.passthrough.push(attr.clone());
            }
            continue;
        } else {
            diag.error_with_help(
                path,
                format!("unknown graph attribute `{}`", path.to_token_stream()),
                "graph attributes are `#[device_launch]`, `#[auto_free_on_launch]`, `#[use_node_priority]` and `#[crate_path = path]`",
            );
            continue;
        };
        if let Err(e) = attr.meta.require_path_only() {
            diag.push(e);
        }
        if slot.is_some() {
            diag.error(attr, "duplicate graph attribute");
        }
        *slot = Some(
            attr.path()
                .get_ident()
                .map_or_else(Span::call_site, Ident::span),
        );
    }
    out
}

/// `#[cfg_attr(predicate, ...)]` on a graph carries `doc` and lint
/// attributes only.
fn cfg_attr_carries_docs_and_lints(attr: &syn::Attribute) -> syn::Result<()> {
    let metas = attr.parse_args_with(
        syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
    )?;
    for meta in metas.iter().skip(1) {
        let path = meta.path();
        let allowed = ["doc", "allow", "warn", "deny", "expect"];
        if !allowed.iter().any(|name| path.is_ident(name)) {
            return Err(syn::Error::new_spanned(
                path,
                "`#[cfg_attr]` on a graph may carry `doc` and lint attributes only; put a `#[cfg]` on the graph itself",
            ));
        }
    }
    Ok(())
}

/// The path of `#[crate_path = path]`: where graph-runtime is, for a crate
/// that renamed the dependency (like serde's `crate = "..."`).
pub fn crate_path(attr: &syn::Attribute) -> syn::Result<syn::Path> {
    let syn::Meta::NameValue(meta) = &attr.meta else {
        return Err(syn::Error::new_spanned(
            attr,
            "expected `#[crate_path = path]`, e.g. `#[crate_path = ::my_graph_runtime]`",
        ));
    };
    match &meta.value {
        syn::Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => Ok(p.path.clone()),
        other => Err(syn::Error::new_spanned(
            other,
            "expected a path to the graph-runtime crate, e.g. `::my_graph_runtime`",
        )),
    }
}

pub(super) fn node_attrs(attrs: &[syn::Attribute], diag: &Diagnostics) -> NodeAttrs {
    let mut out = NodeAttrs::default();
    for attr in attrs {
        let path = attr.path();
        let span = path.get_ident().map_or_else(Span::call_site, Ident::span);
        let duplicate = if path.is_ident("disabled") {
            if let Err(e) = attr.meta.require_path_only() {
                diag.push(e);
            }
            out.disabled.replace(span).is_some()
        } else if path.is_ident("escape") {
            if let Err(e) = attr.meta.require_path_only() {
                diag.push(e);
            }
            out.escape.replace(span).is_some()
        } else if path.is_ident("disjoint") {
            // `#[disjoint]`: every buffer; `#[disjoint(x, y)]`: those.
            let buffers = match &attr.meta {
                syn::Meta::Path(_) => Ok(Vec::new()),
                _ => attr
                    .parse_args_with(
                        syn::punctuated::Punctuated::<Ident, syn::Token![,]>::parse_terminated,
                    )
                    .map(|list| list.into_iter().collect()),
            };
            match buffers {
                Ok(buffers) => out.disjoint.replace((span, buffers)).is_some(),
                Err(_) => {
                    diag.error(
                        attr,
                        "expected `#[disjoint]` or `#[disjoint(buffer, ...)]` naming buffers",
                    );
                    false
                }
            }
        } else if path.is_ident("priority") {
            match attr.parse_args::<syn::Expr>() {
                Ok(expr) => out.priority.replace((span, expr)).is_some(),
                Err(_) => {
                    diag.error(attr, "expected `#[priority(N)]` with an integer priority");
                    false
                }
            }
        } else {
            diag.error_with_help(
                path,
                format!("unknown node attribute `{}`", path.to_token_stream()),
                "node attributes are `#[disabled]`, `#[priority(N)]`, `#[disjoint]` or `#[disjoint(buffer, ...)]` and, on alloc nodes, `#[escape]`",
            );
            false
        };
        if duplicate {
            diag.error(attr, "duplicate node attribute");
        }
    }
    out
}
