//! The expression form: `graph(&ctx) { ... }` evaluates to
//! `Result<graph_runtime::Graph, GraphError>`. Operands written `&x` or
//! `&mut x` are bound once each (`&mut` if any use is mutable) into a fresh
//! variable (`x` itself keeps its meaning elsewhere): a `CudaSlice` becomes
//! a `Buf`; host slices, vectors and events pass through.

use super::asserts::{race_checks, read_only_checks};
use super::level::{bound_name, internal, Emitter};
use super::Runtime;
use crate::check::Topology;
use crate::model::place;
use crate::model::{Model, Op, TOP};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::{Expr, Ident};

pub fn expand(model: &Model<'_>, topology: &Topology, rt: &Runtime) -> TokenStream {
    let Some(ctx) = &model.def.context else {
        return TokenStream::new();
    };
    let references = referenced_places(model);
    let mut emitter = Emitter::new(model, topology, rt);
    emitter.bound_references = true;
    let graph_var = internal("__graph");
    let loads = emitter.load_kernels(&graph_var);
    let level = emitter.level(TOP, &graph_var);
    let reserve = emitter.reserve_records(&graph_var);
    let captures = references.iter().map(|(name, mutable, deref)| {
        let var = format_ident!("__operand_{}", name);
        match (*mutable, *deref) {
            (true, false) => quote! { let #var = &mut #name; },
            (true, true) => quote! { let #var = &mut *#name; },
            (false, false) => quote! { let #var = &#name; },
            (false, true) => quote! { let #var = &*#name; },
        }
    });
    let binds = references.iter().map(|(name, _, _)| {
        let var = format_ident!("__operand_{}", name);
        let bound = bound_name(name);
        // The graph variable located at the operand too, so that an error
        // about the call points at the operand, not the whole macro. (The
        // operand variables keep call-site hygiene: each is a reference to
        // the caller's own variable, nothing a caller could misuse.)
        let graph_here = Ident::new("__graph", Span::mixed_site().located_at(name.span()));
        let rt = rt.at(name.span());
        quote_spanned! {name.span()=>
            let #bound = #rt::__private::Operand::into_operand(#var, #graph_here);
        }
    });
    let read_only_checks = read_only_checks(model, rt);
    let race_checks = race_checks(model, topology, rt);
    quote! {
        {
            #read_only_checks
            #race_checks
            #(#captures)*
            #rt::__private::build_graph(#ctx, |#graph_var| {
                #reserve
                #(#binds)*
                #loads
                #level
                ::core::result::Result::Ok(())
            })
        }
    }
}

/// `{ compile errors; a value of the right type }`.
pub fn fallback(rt: &Runtime) -> TokenStream {
    quote!(#rt::__private::invalid_graph())
}

/// Identifiers the operands reference as `&x` or `&mut x` (or through a
/// reference, `&*x`, `&mut *x`), in first-use order, with whether any use
/// is mutable and whether any goes through a reference.
fn referenced_places(model: &Model<'_>) -> Vec<(Ident, bool, bool)> {
    let mut found: Vec<(Ident, bool, bool)> = Vec::new();
    let mut note = |expr: &Expr| {
        if let Some(place) = place(expr) {
            match found.iter_mut().find(|(i, _, _)| *i == place.ident) {
                Some(entry) => {
                    entry.1 |= place.mutable;
                    entry.2 |= place.deref;
                }
                None => found.push((place.ident, place.mutable, place.deref)),
            }
        }
    };
    for node in &model.nodes {
        match node.op {
            Op::Record { event } | Op::Wait { event } => note(event),
            op => op.buffer_operands().into_iter().for_each(&mut note),
        }
    }
    found
}
