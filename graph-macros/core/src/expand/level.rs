//! Statements that build one graph level (the top graph or a conditional
//! body) into a `graph_runtime::Graph` variable.

use super::repeat_deps::Dep;
use super::Runtime;
use crate::check::Topology;
use crate::model::{place, Kind, LevelId, Model, NodeId, Op, Origin};
use crate::parse::EdgeKind;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use rustc_hash::FxHashMap;
use syn::spanned::Spanned;
use syn::Ident;

/// A local variable of the generated code. Its span is `mixed_site`, so
/// no user token can name it (a kernel argument `__graph` is the caller's
/// own `__graph`, never the graph being built).
pub fn internal(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// The builder's copy of top-level handle `name`, taken where it is made,
/// for the `bound()` field: a buffer the graph names alike later does not
/// shadow it.
pub fn bound_handle(name: &Ident) -> Ident {
    internal(&format!("__bound_{name}"))
}

/// Shared state of one graph's expansion.
pub struct Emitter<'m, 'a> {
    pub model: &'m Model<'a>,
    pub topology: &'m Topology,
    /// Edge kinds by (from, to), with where each was written, for
    /// programmatic edges.
    pub(super) edge_kinds: FxHashMap<(NodeId, NodeId), (EdgeKind, Option<Span>)>,
    /// Expression form: operands written `&x` / `&mut x` name the bound `x`.
    pub bound_references: bool,
    /// Item form: body nodes with accessors hand their handle out of their
    /// closure through a slot variable.
    pub body_handles: bool,
    /// Item form: top-level nodes with accessors are built into the node
    /// table `__nodes` in place (no table of thousands of handles to move).
    pub nodes_in_place: bool,
    /// Per node: the index of its kernel among the distinct kernel paths
    /// (as written), each loaded once per build into `__kernelN`.
    kernel_of: Vec<usize>,
    /// Per node: the repeated blocks holding it, outermost first (see
    /// `Model::repeat_chain`).
    pub(super) chains: Vec<Vec<crate::model::RepeatId>>,
    /// Nodes an edge between iterations leaves from (their handles are
    /// kept for later iterations).
    pub(super) carried_sources: rustc_hash::FxHashSet<NodeId>,
    /// Declarations the repeated blocks being built hoist before their
    /// enclosing block's loop, one frame per block (see `repeat::block`).
    pub(super) hoisted: std::cell::RefCell<Vec<TokenStream>>,
    /// The runtime's path (`#rt::Graph`).
    pub(super) rt: &'m Runtime,
    /// Per node: the part of a split node table holding its field (see
    /// `table`).
    pub(super) table_parts: Vec<Option<usize>>,
}

impl<'m, 'a> Emitter<'m, 'a> {
    pub fn new(model: &'m Model<'a>, topology: &'m Topology, rt: &'m Runtime) -> Self {
        let edge_kinds = model
            .levels
            .iter()
            .flat_map(|l| &l.edges)
            .map(|e| ((e.from, e.to), (e.kind, e.kind_span)))
            .collect();
        let mut kernels: FxHashMap<String, usize> = FxHashMap::default();
        let mut key = String::new();
        let kernel_of = model
            .nodes
            .iter()
            .map(|node| match node.op {
                Op::Kernel(k) => {
                    path_key(&k.function, &mut key);
                    if let Some(&index) = kernels.get(&key) {
                        return index;
                    }
                    let count = kernels.len();
                    kernels.insert(key.clone(), count);
                    count
                }
                _ => 0,
            })
            .collect();
        let chains = if model.repeats.is_empty() {
            vec![Vec::new(); model.nodes.len()]
        } else {
            (0..model.nodes.len())
                .map(|id| {
                    let mut chain = model.repeat_chain(id);
                    chain.reverse();
                    chain
                })
                .collect()
        };
        let carried_sources = model
            .repeats
            .iter()
            .flat_map(|r| &r.carried)
            .map(|c| c.from)
            .collect();
        let mut emitter = Emitter {
            model,
            topology,
            chains,
            carried_sources,
            hoisted: std::cell::RefCell::default(),
            edge_kinds,
            bound_references: false,
            body_handles: false,
            nodes_in_place: false,
            kernel_of,
            rt,
            table_parts: Vec::new(),
        };
        emitter.table_parts = super::table::parts(&emitter);
        emitter
    }

    /// Whether a later node depends on `id` (so its handle is kept).
    pub(super) fn is_dependency(&self, id: NodeId) -> bool {
        !self.topology.successors[id].is_empty() || self.carried_sources.contains(&id)
    }

    /// The pattern binding node `id`'s handle: its variable, or `_` when
    /// nothing uses it (no unused-variable warnings in the caller's crate).
    pub(super) fn node_binding(&self, id: NodeId) -> super::Piece {
        let kept_for_accessor = self.body_handles
            && self.has_accessor(id)
            && self.model.nodes[id].kind() != Kind::Kernel;
        if self.is_dependency(id) || kept_for_accessor {
            self.node_var(id).into()
        } else {
            Ident::new("_", Span::call_site()).into()
        }
    }

    /// The variable holding node `id`'s `Node` handle.
    pub fn node_var(&self, id: NodeId) -> Ident {
        let node = &self.model.nodes[id];
        match node.origin {
            Origin::ScopeFree(_) => {
                format_ident!("__free_{}", node.stem, span = Span::mixed_site())
            }
            _ => format_ident!("__node_{}", node.stem, span = Span::mixed_site()),
        }
    }

    /// Reserves the graph's node records for the nodes built outside
    /// repeated blocks (each block reserves for its own iterations: a
    /// reservation here that a block then outgrows would copy the records).
    /// A hint: the nodes of a conditional body inside a repeated block are
    /// counted here once, though built once per iteration.
    pub fn reserve_records(&self, g: &Ident) -> TokenStream {
        let nodes = self
            .model
            .nodes
            .iter()
            .filter(|node| node.repeat.is_none() && !node.origin.is_virtual())
            .count();
        if nodes == 0 {
            return TokenStream::new();
        }
        let nodes = proc_macro2::Literal::usize_unsuffixed(nodes);
        quote! { #g.reserve(#nodes); }
    }

    /// Statements loading each distinct kernel once, into `__kernelN`.
    pub fn load_kernels(&self, g: &Ident) -> TokenStream {
        let rt = self.rt;
        let paths = self
            .model
            .nodes
            .iter()
            .enumerate()
            .filter_map(|(id, node)| match node.op {
                Op::Kernel(k) => Some((&k.function, self.kernel_of[id])),
                _ => None,
            });
        let mut out = TokenStream::new();
        // Indices follow the paths' first occurrences in node order: a
        // kernel is new exactly when its index is the next one.
        let mut next = 0;
        for (path, index) in paths {
            if index != next {
                continue;
            }
            next += 1;
            let var = format_ident!("__kernel{}", index, span = Span::mixed_site());
            out.extend(quote! {
                let #var = &*<#path as #rt::__private::KernelDef>::__loaded(#g.context())?;
            });
        }
        out
    }

    /// The variable holding kernel node `id`'s loaded kernel.
    pub(super) fn loaded_kernel(&self, id: NodeId) -> Ident {
        format_ident!("__kernel{}", self.kernel_of[id], span = Span::mixed_site())
    }

    /// The variable holding a kernel node's typed `KernelNode`.
    pub fn kernel_var(&self, id: NodeId) -> Ident {
        format_ident!(
            "__kernel_{}",
            self.model.nodes[id].stem,
            span = Span::mixed_site()
        )
    }

    /// The variable that carries a body node's handle out of its closure.
    pub fn slot_var(&self, id: NodeId) -> Ident {
        format_ident!(
            "__slot_{}",
            self.model.nodes[id].stem,
            span = Span::mixed_site()
        )
    }

    /// Whether a node gets a typed accessor on the exec (and so a handle
    /// kept after building).
    pub fn has_accessor(&self, id: NodeId) -> bool {
        matches!(
            (self.model.nodes[id].kind(), self.model.nodes[id].origin),
            (Kind::Kernel | Kind::Copy | Kind::Fill, Origin::Stmt(_))
        ) && self.model.nodes[id].placed.is_none()
    }

    /// Whether node `id`'s handle is built into the node table in place.
    pub fn in_place(&self, id: NodeId) -> bool {
        self.nodes_in_place
            && self.model.nodes[id].level == crate::model::TOP
            && self.chains[id].is_empty()
            && self.has_accessor(id)
    }

    /// The variable with the handle a typed accessor uses.
    pub fn handle_var(&self, id: NodeId) -> Ident {
        if self.model.nodes[id].kind() == Kind::Kernel {
            self.kernel_var(id)
        } else {
            self.node_var(id)
        }
    }

    /// An operand as the generated code uses it.
    pub(super) fn operand(&self, expr: &syn::Expr) -> super::Piece {
        match place(expr) {
            Some(place) if self.bound_references => bound_name(&place.ident).into(),
            _ => match expr {
                // A plain name (most operands): one token, no stream.
                syn::Expr::Path(p) if p.attrs.is_empty() && p.qself.is_none() => {
                    match p.path.get_ident() {
                        Some(ident) => ident.clone().into(),
                        None => expr.to_token_stream().into(),
                    }
                }
                _ => expr.to_token_stream().into(),
            },
        }
    }

    /// Node `id`'s dependencies as a `&[Node]` expression: a fixed list,
    /// or one assembled in this iteration (see `repeat`).
    pub(super) fn deps(&self, id: NodeId, list: Vec<Dep>) -> TokenStream {
        if Self::static_deps(&list) {
            let vars = list.into_iter().map(|d| super::Moved::from(d.value));
            return quote!(&[#(#vars),*]);
        }
        if let Some(direct) = self.direct(&list) {
            return direct;
        }
        let value = self.deps_value(id);
        quote!(#value.as_slice())
    }

    pub(super) fn node(&self, id: NodeId, g: &Ident) -> TokenStream {
        let rt = self.rt;
        let node = &self.model.nodes[id];
        if let Op::Kernel(k) = node.op {
            return self.kernel_node(id, k, g);
        }
        // Each interpolated once, by move (see `Moved`).
        let var = super::Moved::from(self.node_binding(id));
        let label = super::Moved::from(self.label_expr(id));
        let deps = super::Moved::from(self.deps(id, self.dep_list(id)));
        let in_body_or_device =
            node.level != crate::model::TOP || self.model.attrs.device_launch.is_some();
        match node.op {
            // Built above (`kernel_node`).
            Op::Kernel(_) => TokenStream::new(),
            Op::Copy { src, dst } => {
                let dst_span = dst.span();
                let (src, dst): (super::Piece, super::Piece) = if in_body_or_device {
                    (self.device_only(src).into(), self.device_only(dst).into())
                } else {
                    (self.operand(src), self.operand(dst))
                };
                // The call spanned at the destination: a destination of
                // another element type is reported there, not over the
                // whole invocation.
                let add_copy = Ident::new("add_copy", dst_span);
                let (src, dst) = (super::Moved::from(src), super::Moved::from(dst));
                quote! { let #var = #g.#add_copy(#label, #src, #dst, #deps)?; }
            }
            Op::Fill { dst, value } => {
                let element = self.model.element_type(dst);
                let dst = super::Moved::from(self.device_only(dst));
                // Spanned at the value: an element type a fill cannot write
                // is reported there.
                let rt_here = rt.at(value.span());
                // Typed by a `let` where the graph spells the element type:
                // rustc's error at `fill y = 0;` into `f32` is then the
                // plain mismatch with its "use a float literal", without
                // notes about a function of the runtime.
                let value = match element {
                    Some(ty) => {
                        let ty = Ident::new(&ty, value.span());
                        quote_spanned! {value.span()=> {
                            let __fill_value: #ty = #value;
                            #rt_here::__private::fill_value(__fill_value)
                        }}
                    }
                    None => quote_spanned! {value.span()=> #rt_here::__private::fill_value(#value)},
                };
                // (Spanned before the move: `span()` of a `Moved` takes it.)
                let add_fill = Ident::new("add_fill", value.span());
                let value = super::Moved::from(value);
                quote! { let #var = #g.#add_fill(#label, #dst, #value, #deps)?; }
            }
            Op::Host {
                closure,
                param: Some(param),
            } => {
                // The call spanned at the closure: a closure that is not
                // `Send` (an `Rc` moved in) is reported there.
                let add = match param.write {
                    true => Ident::new("add_host_writing", closure.span()),
                    false => Ident::new("add_host_reading", closure.span()),
                };
                let name = param.name;
                quote! { let #var = #g.#add(#label, #name, #closure, #deps)?; }
            }
            Op::Host { closure, .. } => {
                let add = Ident::new("add_host", closure.span());
                quote! { let #var = #g.#add(#label, #closure, #deps)?; }
            }
            Op::Empty => quote! { let #var = #g.add_empty(#label, #deps)?; },
            Op::Child { graph } => quote! {
                let #var = #g.add_child(#label, #rt::__private::IntoChild::into_child(#graph), #deps)?;
            },
            Op::Record { event } => {
                let event = super::Moved::from(self.operand(event));
                quote! { let #var = #g.add_event_record(#label, #event, #deps)?; }
            }
            Op::Wait { event } => {
                let event = super::Moved::from(self.operand(event));
                quote! { let #var = #g.add_event_wait(#label, #event, #deps)?; }
            }
            // The closure and the stream are evaluated outside the `unsafe`
            // block: only the call that trusts them is unsafe, not the
            // user's code in them.
            Op::Capture {
                unsafe_token,
                stream,
                closure,
            } => {
                let work = internal("__work");
                let on = internal("__stream");
                let handles: Vec<&Ident> = self
                    .model
                    .handles_set_by(id)
                    .map(|h| &self.model.handles[h].syntax.name)
                    .collect();
                let add = super::Moved::from(if handles.is_empty() {
                    quote! { #g.add_capture(#label, #on, #deps, #work) }
                } else {
                    quote! { #g.add_capture_setting(#label, #on, #deps, &[#(#handles),*], #work) }
                });
                // Typed at the stream's tokens: a `&CudaStream` is
                // reported there, not over the whole invocation.
                let stream_type = {
                    let rt = rt.at(stream.span());
                    quote_spanned!(stream.span()=> &::std::sync::Arc<#rt::cudarc::driver::CudaStream>)
                };
                quote! {
                    let #var = {
                        let #work = #rt::__private::capture_work(#closure);
                        let #on: #stream_type = #stream;
                        #unsafe_token { #add }?
                    };
                }
            }
            Op::Alloc { buffer, ty, len } => {
                let len_expr = super::Moved::from(alloc_len(len, rt));
                quote! { let (#var, #buffer) = #g.add_alloc::<#ty>(#label, #len_expr, #deps)?; }
            }
            Op::Free { buffer } => {
                quote! { let #var = #g.add_free(#label, #buffer, #deps)?; }
            }
            Op::If { handle } => {
                let bodies: Vec<super::Moved> = node
                    .bodies
                    .iter()
                    .map(|&b| super::Moved::from(self.body_closure(b)))
                    .collect();
                match bodies.as_slice() {
                    [then] => quote! { let #var = #g.add_if(#label, #handle, #deps, #then)?; },
                    [then, otherwise] => {
                        quote! { let #var = #g.add_if_else(#label, #handle, #deps, #then, #otherwise)?; }
                    }
                    _ => TokenStream::new(),
                }
            }
            Op::While { handle } => {
                let body = node
                    .bodies
                    .first()
                    .map(|&b| super::Moved::from(self.body_closure(b)));
                quote! { let #var = #g.add_while(#label, #handle, #deps, #body)?; }
            }
            Op::Switch { handle, .. } => {
                let arms = node.bodies.len() as u32;
                let inner = format_ident!(
                    "__graph{}",
                    node.bodies.first().copied().unwrap_or_default(),
                    span = Span::mixed_site()
                );
                let cases = node.bodies.iter().enumerate().map(|(i, &b)| {
                    let i = i as u32;
                    let body = super::Moved::from(self.level(b, &inner));
                    super::Moved::from(quote! { #i => { #body ::core::result::Result::Ok(()) } })
                });
                let arm = internal("__arm");
                quote! {
                    let #var = #g.add_switch(#label, #handle, #arms, #deps, |#arm, #inner| match #arm {
                        #(#cases)*
                        _ => ::core::result::Result::Ok(()),
                    })?;
                }
            }
        }
    }

    fn body_closure(&self, level: LevelId) -> TokenStream {
        let g = format_ident!("__graph{}", level, span = Span::mixed_site());
        let body = super::Moved::from(self.level(level, &g));
        quote! { |#g| { #body ::core::result::Result::Ok(()) } }
    }
}

impl Emitter<'_, '_> {
    /// An operand that must be device memory (in a conditional body, in a
    /// device-launch graph, the target of a fill): annotated as a `Buf`, so
    /// rustc points at the operand:
    ///   error[E0308]: mismatched types ... expected `Buf<'_, _>`, found `&[f32]`
    fn device_only(&self, expr: &syn::Expr) -> TokenStream {
        let span = expr.span();
        let operand = self.operand(expr);
        let rt = self.rt.at(span);
        let ty = quote_spanned!(span=> #rt::__private::DeviceBuf<'_, _>);
        quote_spanned! {span=> { let __device: #ty = #operand; __device } }
    }
}

/// The text of a kernel's path as written, into `key` (cleared first),
/// to tell distinct kernels apart: one buffer for every node rather
/// than a token stream and a string each.
fn path_key(path: &syn::Path, key: &mut String) {
    use std::fmt::Write;
    key.clear();
    let plain = path
        .segments
        .iter()
        .all(|s| matches!(s.arguments, syn::PathArguments::None));
    if !plain {
        key.push_str(&path.to_token_stream().to_string());
        return;
    }
    if path.leading_colon.is_some() {
        key.push_str("::");
    }
    for (i, segment) in path.segments.iter().enumerate() {
        let sep = if i == 0 { "" } else { "::" };
        let _ = write!(key, "{sep}{}", segment.ident);
    }
}

/// The variable holding the bound operand `&x` / `&mut x` (expression form):
/// mixed-site, so that an operand the user writes `__bound_x` cannot reach
/// it past the race check, and located at `x` for errors.
pub fn bound_name(ident: &Ident) -> Ident {
    format_ident!(
        "__bound_{}",
        ident,
        span = Span::mixed_site().located_at(ident.span())
    )
}

/// An alloc node's length, converted where it is written (an error about its
/// type points at the user's tokens).
pub(super) fn alloc_len(len: &syn::Expr, rt: &Runtime) -> TokenStream {
    let span = syn::spanned::Spanned::span(len);
    let rt = rt.at(span);
    quote::quote_spanned! {span=> #rt::memory::AllocLen::to_len(#len) }
}
