//! The walk of one graph level: its handles, then its nodes in
//! topological order, each repeated block as a loop (see `repeat`), a long
//! straight-line level in chunks (see `chunk`), and where each accessor's
//! handle goes once built.

use super::level::{internal, Emitter};
use super::repeat::Settle;
use crate::model::{Kind, LevelId, NodeId, Origin};
use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

impl Emitter<'_, '_> {
    /// Statements building `level` into the graph variable `g`.
    pub fn level(&self, level: LevelId, g: &Ident) -> TokenStream {
        let rt = self.rt;
        let mut out = TokenStream::new();
        if self.spells_labels(level) {
            let label = internal("__label");
            out.extend(quote! { let mut #label = #rt::__private::Label::new(); });
        }
        // Kernel nodes keep a failure in `__failed` rather than return it
        // (see `Graph::__add_kernel`); every other node, the end of each
        // iteration and the end of the level settle it first, so the first
        // failure is returned.
        let mut settle = Settle::default();
        if self.model.repeats.iter().any(|r| r.level == level) {
            // Declared before the first block: its loop may hold the first kernel.
            out.extend(settle.declare(rt));
        }
        self.units(level, None, g, &mut settle, &mut out);
        out.extend(settle.settle(rt));
        out
    }

    /// Statements building the nodes of `level` directly in the repeated
    /// block `within` (or outside every block), nested blocks as loops.
    pub(super) fn units(
        &self,
        level: LevelId,
        within: Option<crate::model::RepeatId>,
        g: &Ident,
        settle: &mut Settle,
        out: &mut TokenStream,
    ) {
        for handle in self.model.handles.iter().filter(|h| {
            h.level == level
                && h.repeats
                    .first()
                    .filter(|&&r| self.model.repeats[r].level == level)
                    .copied()
                    == within
        }) {
            let name = &handle.syntax.name;
            let default = match &handle.syntax.default {
                Some(value) => {
                    // Typed at the value's tokens: a default of another
                    // type (`true`) is reported there, not at the macro.
                    let var = internal("__cond_default");
                    let value_type =
                        quote::quote_spanned!(syn::spanned::Spanned::span(value)=> u32);
                    out.extend(quote! { let #var: #value_type = #value; });
                    quote!(::core::option::Option::Some(#var))
                }
                None => quote!(::core::option::Option::None),
            };
            out.extend(quote! { let #name = #g.cond_handle(#default)?; });
            // (Named graphs only: the expression form has no `bound()`.)
            let named = self.model.def.name.is_some();
            if named && handle.is_top_level() {
                let copy = super::level::bound_handle(name);
                out.extend(quote! { let #copy = #name; });
            }
        }
        let order = self.order_in(level, within);
        if within.is_none() && order.len() > super::chunk::CHUNK && self.straight_line(level) {
            return self.chunks(&order, g, settle, out);
        }
        for id in order {
            let origin = self.model.nodes[id].origin;
            if let Origin::RepeatStart(block) = origin {
                out.extend(settle.settle(self.rt));
                out.extend(self.block(block, g, settle));
            } else if origin.is_virtual() {
                // A placed fragment's start and end build nothing: the
                // dependencies through them are resolved (see `dep_list`).
            } else {
                let is_kernel = self.model.nodes[id].kind() == Kind::Kernel;
                if is_kernel {
                    out.extend(settle.declare(self.rt));
                } else {
                    out.extend(settle.settle(self.rt));
                }
                settle.unsettled = is_kernel;
                out.extend(self.node(id, g));
                out.extend(self.keep_handle(id));
            }
            if let Some(block) = within {
                out.extend(self.after_member(id, block));
            }
        }
    }

    /// Where an accessor's node handle goes once built: its slot (a body
    /// node), the node table (a top-level node not built there in place),
    /// or its repeated node table.
    pub(super) fn keep_handle(&self, id: NodeId) -> Option<TokenStream> {
        let node = &self.model.nodes[id];
        if !self.body_handles || !self.has_accessor(id) {
            return None;
        }
        let nodes = internal("__nodes");
        if !self.chains[id].is_empty() {
            let (field, var) = (self.table_field(id), self.handle_var(id));
            let mut table = quote!(#nodes.#field);
            for _ in 1..self.chains[id].len() {
                let rt = self.rt;
                table = quote!((*#rt::__private::last(&mut #table)));
            }
            return Some(quote! { #table.push(#var); });
        }
        if node.level != crate::model::TOP {
            let (slot, var) = (self.slot_var(id), self.handle_var(id));
            return Some(quote! { #slot = ::core::option::Option::Some(#var); });
        }
        if self.in_place(id) && node.kind() != Kind::Kernel {
            let (field, var) = (self.table_field(id), self.node_var(id));
            return Some(quote! { #nodes.#field = #var; });
        }
        None
    }
}
