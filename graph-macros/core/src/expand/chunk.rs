//! Long straight-line levels, built in chunks: each a closure of its own
//! that hands on what later chunks use (node handles, allocations).

use super::level::Emitter;
use super::repeat::Settle;
use crate::model::{Kind, LevelId, NodeId, Op};
use proc_macro2::TokenStream;
use quote::quote;
use rustc_hash::FxHashMap;
use syn::Ident;

/// Nodes per closure in a long straight-line level (see `chunks`).
pub(super) const CHUNK: usize = 256;

impl Emitter<'_, '_> {
    /// Whether `level` is nodes only (no repeated block or placed fragment).
    pub(super) fn straight_line(&self, level: LevelId) -> bool {
        !self.model.repeats.iter().any(|r| r.level == level)
            && !self.model.places.iter().any(|p| p.level == level)
    }

    /// A long straight-line level, built in chunks of `CHUNK` nodes, each
    /// in a closure of its own that hands on the node handles later chunks
    /// depend on. rustc borrow-checks and optimizes each closure on its
    /// own: one function of 16,000 nodes made those passes superlinear.
    pub(super) fn chunks(
        &self,
        order: &[NodeId],
        g: &Ident,
        settle: &mut Settle,
        out: &mut TokenStream,
    ) {
        let rt = self.rt;
        out.extend(settle.declare(rt));
        let mut chunk_of = FxHashMap::default();
        for (i, &id) in order.iter().enumerate() {
            chunk_of.insert(id, i / CHUNK);
        }
        // The last chunk naming each buffer (an allocation's variable is
        // handed on to the chunks after its own that use or free it).
        let mut last_use: FxHashMap<String, usize> = FxHashMap::default();
        for (i, &id) in order.iter().enumerate() {
            let node = &self.model.nodes[id];
            let freed = match node.op {
                Op::Free { buffer } => Some(buffer),
                _ => None,
            };
            for ident in node.uses.iter().chain(freed) {
                let entry = last_use.entry(ident.to_string()).or_default();
                *entry = (*entry).max(i / CHUNK);
            }
        }
        for (c, chunk) in order.chunks(CHUNK).enumerate() {
            let mut body = TokenStream::new();
            for &id in chunk {
                let is_kernel = self.model.nodes[id].kind() == Kind::Kernel;
                if !is_kernel {
                    body.extend(settle.settle(rt));
                }
                settle.unsettled = is_kernel;
                body.extend(self.node(id, g));
                body.extend(self.keep_handle(id));
            }
            body.extend(settle.settle(rt));
            let mut live: Vec<Ident> = Vec::new();
            for &id in chunk {
                let later = |c2: Option<&usize>| c2.is_some_and(|&later| later > c);
                if self.topology.successors[id]
                    .iter()
                    .any(|s| later(chunk_of.get(s)))
                {
                    live.push(self.node_var(id));
                }
                if let Op::Alloc { buffer, .. } = self.model.nodes[id].op {
                    // An escaping buffer is also read after the chunks (`bound`).
                    let escapes = self.model.nodes[id].attrs.escape.is_some();
                    if escapes || later(last_use.get(&buffer.to_string())) {
                        live.push(buffer.clone());
                    }
                }
            }
            // The closure's result type comes from `chunk`'s bound.
            let body = super::Moved::from(body);
            out.extend(quote! {
                let (#(#live,)*) = #rt::__private::chunk(|| {
                    #body
                    ::core::result::Result::Ok((#(#live,)*))
                })?;
            });
        }
    }
}
