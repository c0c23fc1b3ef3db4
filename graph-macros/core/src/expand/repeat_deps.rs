//! A node's dependencies inside repeated blocks, as the generated code
//! finds them: its predecessors built in this iteration, the nodes before
//! its block (in the iterations where it is among the first), the earlier
//! iterations' nodes its edges between iterations name (from their
//! histories), each with its edge kind.

use super::level::{internal, Emitter};
use super::Runtime;
use crate::model::{NodeId, Origin, RepeatId};
use crate::parse::EdgeKind;
use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};

/// Where a dependency comes from, for `direct`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A node built before it, or a nested block's last nodes.
    Other,
    /// The nodes before its block, in iterations below `back` (or all).
    Start(RepeatId, Option<usize>),
    /// A node `back` iterations earlier, from iteration `back` on.
    Earlier(RepeatId, usize),
}

/// One dependency of a node as the generated code finds it.
pub struct Dep {
    /// A `Node` expression, or (`slice`) a `&[Node]` one.
    pub value: super::Piece,
    pub slice: bool,
    /// Present only in the iterations where this holds.
    pub condition: Option<TokenStream>,
    /// What it is, for the shapes built without a `Deps` (see `direct`).
    pub shape: Shape,
    pub kind: EdgeKind,
    /// Where a programmatic edge was written.
    pub span: Option<Span>,
}

impl Emitter<'_, '_> {
    /// Node `id`'s dependencies, in order: its predecessors in the level,
    /// then the edges between iterations that enter it.
    pub fn dep_list(&self, id: NodeId) -> Vec<Dep> {
        let node = &self.model.nodes[id];
        let mut list: Vec<Dep> = Vec::new();
        for &p in &self.topology.predecessors[id] {
            // A placed fragment builds no node for its start and end: a
            // dependency on one is a dependency on what precedes it.
            if matches!(
                self.model.nodes[p].origin,
                Origin::PlaceStart(_) | Origin::PlaceEnd(_)
            ) {
                list.extend(self.dep_list(p));
                continue;
            }
            let (kind, span) = self
                .edge_kinds
                .get(&(p, id))
                .copied()
                .unwrap_or((EdgeKind::Full, None));
            let mut shape = Shape::Other;
            let (value, slice, condition) = match self.model.nodes[p].origin {
                Origin::RepeatStart(block) => {
                    let start = self.block_var("start", block);
                    let latest = self.model.repeats[block]
                        .carried
                        .iter()
                        .filter(|c| c.to == id)
                        .map(|c| c.back)
                        .min();
                    let counter = self.counter(block);
                    let condition = latest.map(|back| quote!(#counter < #back));
                    shape = Shape::Start(block, latest);
                    (quote!(#start.as_slice()).into(), true, condition)
                }
                Origin::RepeatEnd(block) => {
                    let end = self.block_var("end", block);
                    (quote!(#end.as_slice()).into(), true, None)
                }
                _ => (self.node_var(p).into(), false, None),
            };
            list.push(Dep {
                value,
                slice,
                condition,
                shape,
                kind,
                span,
            });
        }
        if !self.model.places.is_empty() {
            // Through an empty placement, one node may come twice: listed
            // once, with a full edge if either path is ordinary.
            let mut kept: Vec<Dep> = Vec::new();
            for dep in list {
                let same = (!dep.slice && dep.condition.is_none())
                    .then(|| {
                        let key = dep.value.to_token_stream().to_string();
                        kept.iter_mut().find(|d| {
                            !d.slice
                                && d.condition.is_none()
                                && d.value.to_token_stream().to_string() == key
                        })
                    })
                    .flatten();
                match same {
                    Some(existing) => {
                        if dep.kind == EdgeKind::Full {
                            existing.kind = EdgeKind::Full;
                            existing.span = None;
                        }
                    }
                    None => kept.push(dep),
                }
            }
            list = kept;
        }
        let Some(block) = node.repeat else {
            return list;
        };
        let counter = self.counter(block);
        for c in self.model.repeats[block]
            .carried
            .iter()
            .filter(|c| c.to == id)
        {
            let (history, back) = (self.history_var(c.from), c.back);
            let slice = matches!(
                self.model.nodes[c.from].origin,
                Origin::RepeatEnd(_) | Origin::PlaceEnd(_)
            );
            let value = match slice {
                true => quote!(&#history[#counter - #back]).into(),
                false => quote!(#history[#counter - #back]).into(),
            };
            list.push(Dep {
                value,
                slice,
                condition: Some(quote!(#counter >= #back)),
                shape: match slice {
                    true => Shape::Other,
                    false => Shape::Earlier(block, back),
                },
                kind: c.kind,
                span: Some(c.kind_span),
            });
        }
        list
    }

    /// Whether the dependencies are a fixed list of node variables.
    pub fn static_deps(list: &[Dep]) -> bool {
        list.iter().all(|d| !d.slice && d.condition.is_none())
    }

    /// The dependencies as a `&[Node]` without assembling a `Deps`, for
    /// the two shapes of a chain (edge kinds all full): the nodes before
    /// the block alone (a block's first node), or those in the first
    /// iteration and the node one step back after it (`step[i-1] -> step`).
    pub fn direct(&self, list: &[Dep]) -> Option<TokenStream> {
        if list.iter().any(|d| d.kind != EdgeKind::Full) {
            return None;
        }
        match list {
            [Dep {
                shape: Shape::Start(_, None),
                value,
                ..
            }] => Some(quote!(#value)),
            [Dep {
                shape: Shape::Start(a, Some(k)),
                value: start,
                ..
            }, Dep {
                shape: Shape::Earlier(b, back),
                value: earlier,
                ..
            }] if a == b && k == back => {
                let counter = self.counter(*a);
                Some(quote! {
                    if #counter >= #back { ::core::slice::from_ref(&#earlier) } else { #start }
                })
            }
            _ => None,
        }
    }

    /// An expression of a `Deps` holding node `id`'s dependencies, for
    /// those assembled per iteration.
    pub fn deps_value(&self, id: NodeId) -> TokenStream {
        let rt = self.rt;
        let deps = internal("__deps");
        let list = self.dep_list(id);
        let kinds = list.iter().any(|d| d.kind != EdgeKind::Full);
        let pushes = list.iter().map(|d| {
            let value = &d.value;
            let push = match (d.slice, kinds) {
                (true, _) => quote! { #deps.extend(#value); },
                (false, false) => quote! { #deps.push(#value); },
                (false, true) => {
                    let kind = edge_kind(d.kind, rt);
                    quote! { #deps.push_kind(#value, #kind); }
                }
            };
            match &d.condition {
                Some(condition) => quote! { if #condition { #push } },
                None => push,
            }
        });
        quote! {{
            let mut #deps = #rt::__private::Deps::new();
            #(#pushes)*
            #deps
        }}
    }
}

/// `EdgeKind::X` in the generated code.
pub fn edge_kind(kind: EdgeKind, rt: &Runtime) -> TokenStream {
    match kind {
        EdgeKind::Full => quote!(#rt::EdgeKind::Full),
        EdgeKind::Programmatic => quote!(#rt::EdgeKind::Programmatic),
        EdgeKind::LaunchOrder => quote!(#rt::EdgeKind::LaunchOrder),
    }
}
