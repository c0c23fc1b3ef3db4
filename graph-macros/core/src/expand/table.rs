//! The node table of a graph item: one field per node with a typed
//! accessor (a vector per repeated block holding it). rustc finds a field
//! by scanning its struct's fields, so with one struct every access in the
//! build was linear in the table: at 16,000 written-out nodes the field
//! lookups alone took 1.8 s of a 23 s build, growing with the square of
//! the count. Past [`PART`] fields the table is split into parts of
//! [`PART`] fields, each a struct of its own, held by the table.

use super::level::Emitter;
use crate::model::{NodeId, Op};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

/// Fields per part of a split node table.
pub(super) const PART: usize = 256;

/// Which part of the table holds each node's field (`None` for nodes
/// without a field, and for every node of a table that is not split).
pub(super) fn parts(emitter: &Emitter<'_, '_>) -> Vec<Option<usize>> {
    let count = emitter.model.nodes.len();
    let accessed: Vec<NodeId> = (0..count).filter(|&id| emitter.has_accessor(id)).collect();
    let mut parts = vec![None; count];
    if accessed.len() > PART {
        for (i, &id) in accessed.iter().enumerate() {
            parts[id] = Some(i / PART);
        }
    }
    parts
}

/// The name of part `k`'s field in the table.
fn part_field(k: usize) -> Ident {
    format_ident!("__part{}", k)
}

impl Emitter<'_, '_> {
    /// The path of node `id`'s field from the table (`label`, or
    /// `__part3.label` in a split table).
    pub(super) fn table_field(&self, id: NodeId) -> super::Piece {
        let label = &self.model.nodes[id].label;
        match self.table_parts[id] {
            Some(k) => {
                let part = part_field(k);
                quote!(#part.#label).into()
            }
            None => label.clone().into(),
        }
    }
}

/// The table's node fields (declarations and their unset values), with
/// the part structs of a split table.
pub(super) struct Table {
    /// The part structs, declared beside the table (empty if not split).
    pub parts: TokenStream,
    /// The table's own fields: one per node, or one per part.
    pub fields: Vec<TokenStream>,
    /// The fields' unset values, in the table's struct expression.
    pub unset: Vec<TokenStream>,
}

/// The node fields of the table named `table` over the nodes `accessed`
/// (those with accessors, in node order); parts derive what the table
/// derives (`derive`) and are as visible (`vis`).
pub(super) fn table(
    emitter: &Emitter<'_, '_>,
    accessed: &[NodeId],
    table: &Ident,
    derive: &TokenStream,
    vis: &syn::Visibility,
) -> Table {
    let rt = emitter.rt;
    let model = emitter.model;
    let field = |id: NodeId| {
        let node = &model.nodes[id];
        let label = &node.label;
        let mut ty = match node.op {
            Op::Kernel(k) => {
                let path = &k.function;
                // The kernel as a qualified self type, not a generic
                // argument: rustc then reports a misspelled one here as
                // at its other uses (one error), without suggesting to
                // make it a type parameter of the table.
                quote!(<#path as #rt::__private::KernelNodeType>::Node)
            }
            _ => quote!(#rt::Node),
        };
        // One table level per repeated block holding it.
        for _ in &emitter.chains[id] {
            let inner = super::Moved::from(ty);
            ty = quote!(::std::vec::Vec<#inner>);
        }
        let ty = super::Moved::from(ty);
        (
            quote!(#label: #ty),
            quote!(#label: #rt::__private::Unset::unset()),
        )
    };
    let split = accessed
        .first()
        .is_some_and(|&id| emitter.table_parts[id].is_some());
    if !split {
        let (fields, unset) = accessed.iter().map(|&id| field(id)).unzip();
        return Table {
            parts: TokenStream::new(),
            fields,
            unset,
        };
    }
    let mut out = Table {
        parts: TokenStream::new(),
        fields: Vec::new(),
        unset: Vec::new(),
    };
    for (k, chunk) in accessed.chunks(PART).enumerate() {
        let (part, name) = (part_field(k), format_ident!("{}{}", table, k));
        let (fields, unset): (Vec<_>, Vec<_>) = chunk.iter().map(|&id| field(id)).unzip();
        let fields = fields.into_iter().map(super::Moved::from);
        let unset = unset.into_iter().map(super::Moved::from);
        out.parts.extend(quote! {
            #[doc(hidden)]
            #derive
            #vis struct #name {
                #(#fields,)*
            }
        });
        out.fields.push(quote!(#part: #name));
        out.unset.push(quote!(#part: #name { #(#unset,)* }));
    }
    out
}
