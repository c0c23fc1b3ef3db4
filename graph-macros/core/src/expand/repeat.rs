//! Repeated blocks in the expansion: each block is a loop over its count,
//! its body built once per iteration. A node's dependencies there are
//! assembled per iteration: the nodes before it in this iteration, the
//! earlier iterations' nodes its edges between iterations name (kept in a
//! history per source), and, in the iterations where it is one of the
//! block's first nodes, the nodes before the block. Nodes after the block
//! depend on its last nodes of every iteration (or, for a count of 0, on
//! the nodes before it: the block stands for its iterations as one node).

use super::level::{internal, Emitter};
use super::Runtime;
use crate::model::{LevelId, NodeId, Origin, RepeatId};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use syn::spanned::Spanned;
use syn::Ident;

/// Whether the kernel-failure slot `__failed` is declared in the current
/// scope, and whether a kernel node was added since it was last settled.
#[derive(Debug, Default)]
pub struct Settle {
    declared: bool,
    pub unsettled: bool,
}

impl Settle {
    /// Declares the slot, if not yet.
    /// (`None`, not an empty stream: each of those is an allocation.)
    pub fn declare(&mut self, rt: &Runtime) -> Option<TokenStream> {
        if std::mem::replace(&mut self.declared, true) {
            return None;
        }
        let failed = internal("__failed");
        Some(quote! {
            let mut #failed: ::core::option::Option<#rt::GraphError> = ::core::option::Option::None;
        })
    }

    /// Returns a kept kernel failure, if a kernel node was added since.
    pub fn settle(&mut self, rt: &Runtime) -> Option<TokenStream> {
        if !std::mem::replace(&mut self.unsettled, false) {
            return None;
        }
        let failed = internal("__failed");
        Some(quote! { #rt::__private::settle(&mut #failed)?; })
    }
}

impl Emitter<'_, '_> {
    /// The loop counter of `block`.
    pub(super) fn counter(&self, block: RepeatId) -> Ident {
        let stem = &self.model.repeats[block].stem;
        format_ident!("__i_{}", stem, span = Span::mixed_site())
    }

    pub(super) fn block_var(&self, prefix: &str, block: RepeatId) -> Ident {
        let stem = &self.model.repeats[block].stem;
        format_ident!("__{}_{}", prefix, stem, span = Span::mixed_site())
    }

    /// The variable with the earlier iterations' handles of a node (or a
    /// nested block's last nodes) that an edge between iterations leaves.
    pub(super) fn history_var(&self, source: NodeId) -> Ident {
        format_ident!(
            "__history_{}",
            self.model.nodes[source].stem,
            span = Span::mixed_site()
        )
    }

    /// Declares a vector before the loop of the block being built (see
    /// `block`).
    fn hoist(&self, decl: TokenStream) {
        if let Some(frame) = self.hoisted.borrow_mut().last_mut() {
            frame.extend(decl);
        }
    }

    /// A node's label in the generated code: its name, or for a repeated
    /// node its name indexed by its iterations (`step[3][17]`).
    pub fn label_expr(&self, id: NodeId) -> super::Piece {
        let label = internal("__label");
        self.label_with(
            id,
            |name, counters| quote!(#label.indexed(#name, &[#(#counters),*])),
        )
    }

    /// A kernel node's label for `Graph::__add_kernel`: as `label_expr`,
    /// but a repeated node's name and iterations go as they are, and the
    /// graph spells `step[3][17]` only when asked (an error, a profile).
    pub fn kernel_label_expr(&self, id: NodeId) -> super::Piece {
        let rt = self.rt;
        self.label_with(
            id,
            |name, counters| quote!(#rt::__private::NodeLabel::Indexed(#name, &[#(#counters),*])),
        )
    }

    /// A node's name, or for a repeated node what `indexed` makes of its
    /// name and the counters of its blocks, outermost first.
    fn label_with(
        &self,
        id: NodeId,
        indexed: impl FnOnce(&str, Vec<Ident>) -> TokenStream,
    ) -> super::Piece {
        let name = &self.model.nodes[id].name;
        let chain = &self.chains[id];
        if chain.is_empty() {
            return proc_macro2::Literal::string(name).into();
        }
        indexed(name, chain.iter().map(|&r| self.counter(r)).collect()).into()
    }

    /// Whether a node of `level` spells its label in the builder (a
    /// repeated node other than a kernel), which needs `__label`.
    pub(super) fn spells_labels(&self, level: LevelId) -> bool {
        self.model.levels[level].nodes.iter().any(|&id| {
            let node = &self.model.nodes[id];
            !self.chains[id].is_empty()
                && !node.origin.is_virtual()
                && !matches!(node.op, crate::model::Op::Kernel(_))
        })
    }

    /// The nodes of `level` that are built directly in `within` (nested
    /// blocks stand as their start), in topological order, smallest source
    /// index first.
    pub(super) fn order_in(&self, level: LevelId, within: Option<RepeatId>) -> Vec<NodeId> {
        let model = self.model;
        // The member of `within` standing for `v`: `v`, or the start of
        // the nested block holding it; None outside `within`.
        let unit = |v: NodeId| -> Option<NodeId> {
            let node = &model.nodes[v];
            if let Origin::RepeatEnd(block) = node.origin {
                if model.repeats[block].parent == within {
                    return Some(model.repeats[block].start);
                }
            }
            let mut at = node.repeat;
            if at == within {
                return (!matches!(node.origin, Origin::RepeatEnd(_))).then_some(v);
            }
            while let Some(block) = at {
                if model.repeats[block].parent == within {
                    return Some(model.repeats[block].start);
                }
                at = model.repeats[block].parent;
            }
            None
        };
        let units: Vec<NodeId> = model.levels[level]
            .nodes
            .iter()
            .copied()
            .filter(|&v| unit(v) == Some(v))
            .collect();
        let mut successors: FxHashMap<NodeId, Vec<NodeId>> = FxHashMap::default();
        let mut in_degree: FxHashMap<NodeId, usize> = units.iter().map(|&v| (v, 0)).collect();
        if model.repeats.is_empty() {
            for &v in &units {
                in_degree.insert(v, self.topology.predecessors[v].len());
            }
        } else {
            for edge in &model.levels[level].edges {
                if let (Some(a), Some(b)) = (unit(edge.from), unit(edge.to)) {
                    if a != b {
                        successors.entry(a).or_default().push(b);
                        *in_degree.entry(b).or_default() += 1;
                    }
                }
            }
        }
        let mut ready: BinaryHeap<Reverse<NodeId>> = units
            .iter()
            .filter(|v| in_degree[v] == 0)
            .map(|&v| Reverse(v))
            .collect();
        let mut order = Vec::with_capacity(units.len());
        while let Some(Reverse(v)) = ready.pop() {
            order.push(v);
            let next = match model.repeats.is_empty() {
                true => &self.topology.successors[v],
                false => successors.get(&v).map_or(&[][..], Vec::as_slice),
            };
            for &s in next {
                if let Some(d) = in_degree.get_mut(&s) {
                    *d -= 1;
                    if *d == 0 {
                        ready.push(Reverse(s));
                    }
                }
            }
        }
        order
    }

    /// A repeated block: its count, the loop building its body, and the
    /// list of its last nodes for the nodes after it.
    pub(super) fn block(&self, block: RepeatId, g: &Ident, settle: &mut Settle) -> TokenStream {
        let rt = self.rt;
        let repeat = &self.model.repeats[block];
        let syntax = repeat.syntax;
        let (counter, var) = (self.counter(block), &syntax.var);
        let (count, start, end) = (
            self.block_var("count", block),
            self.block_var("start", block),
            self.block_var("end", block),
        );
        let label = syntax.label.to_string();
        let count_expr = &syntax.count;
        // Through the trait at the count's tokens: a count of another type
        // is one error there (a function's bound adds a note pointing into
        // the runtime, and a label over the whole macro).
        let checked_count = {
            let span = count_expr.span();
            let rt = rt.at(span);
            quote_spanned! {span=> #rt::__private::RepeatCount::__checked(#count_expr, #label)? }
        };
        let start_deps = self.deps_value(repeat.start);
        // In a block of the same level, the vectors one instance of this
        // block uses are declared once, before the outer loop, and cleared
        // here: no allocation per lane of lanes of chains.
        let hoisted = repeat.parent.is_some();
        // (Inline up to a few nodes: most blocks end in one node a lane.)
        let end_decl = if hoisted {
            self.hoist(quote! { let mut #end = #rt::__private::NodeList::new(); });
            quote! { #end.clear(); }
        } else {
            quote! { let mut #end = #rt::__private::NodeList::new(); }
        };
        // Histories of the members edges between iterations leave from.
        let histories = repeat.carried.iter().map(|c| c.from).collect::<Vec<_>>();
        let mut history_decls = TokenStream::new();
        let mut seen = Vec::new();
        for source in histories {
            if seen.contains(&source) {
                continue;
            }
            seen.push(source);
            let history = self.history_var(source);
            let ty = match self.model.nodes[source].origin {
                Origin::RepeatEnd(_) | Origin::PlaceEnd(_) => {
                    quote!(::std::vec::Vec<::std::vec::Vec<#rt::Node>>)
                }
                _ => quote!(::std::vec::Vec<#rt::Node>),
            };
            let reserve = quote!(#rt::__private::reserve(&mut #history, #count););
            if hoisted {
                self.hoist(quote! { let mut #history: #ty = ::std::vec::Vec::new(); });
                history_decls.extend(quote! { #history.clear(); #reserve });
            } else {
                history_decls
                    .extend(quote! { let mut #history: #ty = ::std::vec::Vec::new(); #reserve });
            }
        }
        // The tables of accessor nodes directly in this block: room for
        // this instance's iterations.
        if self.body_handles {
            let nodes = internal("__nodes");
            for (id, chain) in self.chains.iter().enumerate() {
                if chain.last() != Some(&block) || !self.has_accessor(id) {
                    continue;
                }
                let field = self.table_field(id);
                let mut table = quote!(#nodes.#field);
                for _ in 1..chain.len() {
                    table = quote!((*#rt::__private::last(&mut #table)));
                }
                history_decls.extend(quote! { #rt::__private::reserve(&mut #table, #count); });
            }
        }
        // Item form: the repeated node tables of nodes in blocks nested in
        // this one get this iteration's table.
        let mut tables = TokenStream::new();
        if self.body_handles {
            let nodes = internal("__nodes");
            for (id, chain) in self.chains.iter().enumerate() {
                let Some(depth) = chain.iter().position(|&r| r == block) else {
                    continue;
                };
                if depth + 1 == chain.len() || !self.has_accessor(id) {
                    continue;
                }
                let field = self.table_field(id);
                let mut table = quote!(#nodes.#field);
                for _ in 0..depth {
                    table = quote!((*#rt::__private::last(&mut #table)));
                }
                tables.extend(quote! { #table.push(::std::vec::Vec::new()); });
            }
        }
        let mut body = TokenStream::new();
        self.hoisted.borrow_mut().push(TokenStream::new());
        self.units(repeat.level, Some(block), g, settle, &mut body);
        let inner_decls = self.hoisted.borrow_mut().pop().unwrap_or_default();
        body.extend(settle.settle(rt));
        // Room for the nodes built directly in the loop (nested blocks make
        // room for theirs), as a straight-line build reserves its count.
        let per_iteration = self.model.levels[repeat.level]
            .nodes
            .iter()
            .filter(|&&n| {
                let node = &self.model.nodes[n];
                node.repeat == Some(block) && !node.origin.is_virtual()
            })
            .count();
        // A nested block reserves for the enclosing blocks' iterations still
        // to come too (guessing they repeat this count), so the records
        // grow once rather than by doubling from lane to lane.
        let reserve = (per_iteration > 0).then(|| {
            let per_iteration = proc_macro2::Literal::usize_unsuffixed(per_iteration);
            let own = quote!(#count.saturating_mul(#per_iteration));
            let mut nodes = own.clone();
            let mut outer = repeat.parent;
            while let Some(parent) = outer {
                let (count, counter) = (self.block_var("count", parent), self.counter(parent));
                nodes = quote!(#nodes.saturating_mul(#count - #counter));
                outer = self.model.repeats[parent].parent;
            }
            quote! { #g.__reserve_repeated(#label, #own, #nodes)?; }
        });
        let claim = self.disjoint_claim(block, g, &count, &label);
        let (claim_decl, claim_start, claim_check) = (claim[0].clone(), &claim[1], &claim[2]);
        quote! {
            let #count: usize = #checked_count;
            #reserve
            let #start = #start_deps;
            #end_decl
            #history_decls
            #inner_decls
            #claim_decl
            for #counter in 0..#count {
                #[allow(unused_variables)]
                let #var: usize = #counter;
                #claim_start
                #tables
                #body
            }
            #claim_check
            if #end.is_empty() {
                #end.extend_from_slice(#start.as_slice());
            }
        }
    }

    /// A `#[disjoint]` block whose iterations no edge orders has its claim
    /// checked once built (`Graph::__check_disjoint`): the index of each
    /// iteration's first node is kept, and the spans they recorded compared.
    /// (Ordered iterations may overlap: the claim is then taken on trust.)
    /// The declaration, the record at each iteration's start, the check.
    fn disjoint_claim(
        &self,
        block: RepeatId,
        g: &Ident,
        count: &Ident,
        label: &str,
    ) -> [TokenStream; 3] {
        let repeat = &self.model.repeats[block];
        if repeat.disjoint.is_none() || !repeat.carried.is_empty() {
            return Default::default();
        }
        let rt = self.rt;
        let starts = self.block_var("starts", block);
        [
            quote! {
                let mut #starts: ::std::vec::Vec<u32> = ::std::vec::Vec::new();
                #rt::__private::reserve(&mut #starts, #count.saturating_add(1));
            },
            quote! { #starts.push(#g.node_count() as u32); },
            quote! {
                #starts.push(#g.node_count() as u32);
                #g.__check_disjoint(#label, &#starts)?;
            },
        ]
    }

    /// After member `id` of `block` (a node, or a nested block's start) is
    /// built in an iteration: its handle (or the nested block's last
    /// nodes) goes to the block's last nodes in the iterations where no
    /// later iteration follows it, and to its history if an edge between
    /// iterations leaves it.
    pub(super) fn after_member(&self, id: NodeId, block: RepeatId) -> TokenStream {
        let repeat = &self.model.repeats[block];
        let (exit, value, slice) = match self.model.nodes[id].origin {
            Origin::RepeatStart(inner) => {
                let end = self.block_var("end", inner);
                (self.model.repeats[inner].end, quote!(#end.as_slice()), true)
            }
            // Its last nodes stand for it (its start leaves nothing to add).
            Origin::PlaceStart(_) => return TokenStream::new(),
            Origin::PlaceEnd(_) => {
                let value = self.deps_value(id);
                (id, quote!(#value.as_slice()), true)
            }
            _ => {
                let var = self.node_var(id);
                (id, quote!(#var), false)
            }
        };
        let mut out = TokenStream::new();
        if self.topology.successors[exit].contains(&repeat.end) {
            let end = self.block_var("end", block);
            let add = match slice {
                true => quote! { #end.extend_from_slice(#value); },
                false => quote! { #end.push(#value); },
            };
            let soonest = repeat
                .carried
                .iter()
                .filter(|c| c.from == exit)
                .map(|c| c.back)
                .min();
            out.extend(match soonest {
                None => add,
                Some(back) => {
                    let (counter, count) = (self.counter(block), self.block_var("count", block));
                    // Not `counter + back >= count`, which a huge `back` overflows.
                    quote! { if #count - #counter <= #back { #add } }
                }
            });
        }
        if self.carried_sources.contains(&exit) {
            let history = self.history_var(exit);
            out.extend(match slice {
                true => quote! { #history.push((#value).to_vec()); },
                false => quote! { #history.push(#value); },
            });
        }
        out
    }
}
