//! The resolved graph: nodes in source order, the graph levels they live in
//! (the top graph and one level per conditional body), edges between node
//! ids, graph allocations and conditional handles.
//!
//! Lowering (`lower`, then `resolve`) resolves names (labels, buffers,
//! handles) and reports the errors that resolution finds: duplicate and
//! unknown labels, edges that cross a conditional body, unknown handles,
//! bad attributes (`attrs`). Ordering rules live in `check`.

pub(crate) mod attrs;
mod blocks;
mod elements;
mod fragment;
mod host;
mod lower;
mod op;
mod operand_idents;
mod resolve;

pub use elements::{literal_suffix, primitive, type_argument, type_spelled};
pub use lower::lower;
pub use op::{argument_field, argument_values, HostParam, Op};
pub use operand_idents::expr_idents;

use crate::parse::{self, EdgeKind, GraphDef, NodeStmt};
use proc_macro2::{Span, TokenStream};
use rustc_hash::FxHashMap;
use syn::Ident;

pub type NodeId = usize;
pub type LevelId = usize;
pub type ScopeId = usize;
pub type HandleId = usize;
pub type BufferId = usize;
pub type RepeatId = usize;
pub type PlaceId = usize;

/// The top graph's level.
pub const TOP: LevelId = 0;

/// A checked-or-being-checked graph, borrowing its syntax tree.
#[derive(Debug)]
pub struct Model<'a> {
    pub def: &'a GraphDef,
    pub attrs: GraphAttrs,
    pub nodes: Vec<Node<'a>>,
    pub levels: Vec<Level>,
    pub scopes: Vec<Scope<'a>>,
    pub handles: Vec<Handle<'a>>,
    pub buffers: Vec<Buffer>,
    pub repeats: Vec<Repeat<'a>>,
    pub places: Vec<Place<'a>>,
    /// `host name: T[len];` declarations, in source order.
    pub host_buffers: Vec<&'a parse::HostDecl>,
    /// `buffer name: T[len];` declarations, in source order.
    pub device_buffers: Vec<&'a parse::BufferDecl>,
    /// Whether an edge was dropped for a label that did not resolve: the
    /// ordering checks would then report errors of the missing edge.
    pub dropped_edges: bool,
    /// Handles by name, per declaring level.
    handle_names: FxHashMap<(LevelId, String), HandleId>,
    /// Allocations by name (the first, where a name repeats).
    buffer_names: FxHashMap<String, BufferId>,
}

impl Model<'_> {
    /// `node`, then each conditional node whose body holds it, out to the
    /// top graph.
    pub fn holders(&self, node: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        std::iter::successors(Some(node), |&n| self.levels[self.nodes[n].level].parent)
    }

    /// The host buffer declared as `name`, if the graph has one.
    pub fn host_named(&self, name: &str) -> Option<&parse::HostDecl> {
        self.host_buffers.iter().copied().find(|h| h.name == name)
    }

    /// The host memory an operand names, written as it is (or in
    /// parentheses): a `host` buffer of the graph, or a parameter of a
    /// named graph taking a host slice (`&[T]`, `&mut [T]`, `&Vec<T>`,
    /// `&mut Vec<T>`). Its name, and how to spell it in a message: the
    /// parameter's type, or `host`.
    pub fn host_memory(&self, expr: &syn::Expr) -> Option<(&Ident, HostMemory)> {
        let ident = bare_name(expr)?;
        let name = ident.to_string();
        if self.buffer_named(&name).is_some() || self.device_named(&name).is_some() {
            return None;
        }
        if let Some(host) = self.host_named(&name) {
            return Some((&host.name, HostMemory::Buffer));
        }
        let param = self.def.params.iter().find(|p| p.name == *ident)?;
        let syn::Type::Reference(r) = &param.ty else {
            return None;
        };
        let host = match &*r.elem {
            syn::Type::Slice(_) => true,
            syn::Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "Vec"),
            _ => false,
        };
        let ty = elements::type_spelled(&param.ty);
        host.then(|| {
            let kind = match r.mutability {
                Some(_) => HostMemory::Mutable(ty),
                None => HostMemory::ReadOnly(ty),
            };
            (&param.name, kind)
        })
    }

    /// The device buffer declared as `name`, if the graph has one.
    pub fn device_named(&self, name: &str) -> Option<&parse::BufferDecl> {
        self.device_buffers.iter().copied().find(|d| d.name == name)
    }

    /// The allocation named `name`, if the graph has one.
    pub fn buffer_named(&self, name: &str) -> Option<BufferId> {
        self.buffer_names.get(name).copied()
    }

    /// The parameter an operand names, when the graph binds it read-only (a
    /// `&CudaSlice` parameter of a named graph): written as it is, or in
    /// parentheses, a block, or a part of it (`y.slice(..)`,
    /// `y.try_slice(..).unwrap()`).
    pub fn read_only_param(&self, expr: &syn::Expr) -> Option<&Ident> {
        let path = match expr {
            syn::Expr::Path(path) => path,
            syn::Expr::Paren(inner) => return self.read_only_param(&inner.expr),
            syn::Expr::Group(inner) => return self.read_only_param(&inner.expr),
            syn::Expr::Block(block) if block.block.stmts.len() == 1 => {
                return match &block.block.stmts[0] {
                    syn::Stmt::Expr(inner, None) => self.read_only_param(inner),
                    _ => None,
                };
            }
            syn::Expr::MethodCall(call)
                if ["slice", "try_slice", "unwrap", "expect"]
                    .iter()
                    .any(|m| call.method == m) =>
            {
                return self.read_only_param(&call.receiver);
            }
            // A macro may make anything of its tokens: any read-only
            // parameter named in them.
            syn::Expr::Macro(call) => {
                let mut streams = vec![call.mac.tokens.clone()];
                while let Some(stream) = streams.pop() {
                    for tree in stream {
                        match tree {
                            proc_macro2::TokenTree::Group(g) => streams.push(g.stream()),
                            proc_macro2::TokenTree::Ident(ident) => {
                                let name = crate::parse::path_expr(ident);
                                if let Some(param) = self.read_only_param(&name) {
                                    return Some(param);
                                }
                            }
                            _ => {}
                        }
                    }
                }
                return None;
            }
            _ => return None,
        };
        let ident = path.path.get_ident()?;
        // An allocation of the graph shadows a parameter of its name.
        if self.buffer_named(&ident.to_string()).is_some() {
            return None;
        }
        let param = self.def.params.iter().find(|p| p.name == *ident)?;
        match &param.ty {
            syn::Type::Reference(r) if r.mutability.is_none() => match &*r.elem {
                syn::Type::Path(p) if p.path.segments.last()?.ident == "CudaSlice" => {
                    Some(&param.name)
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// The handle named `name` visible from `level`: declared there or in an
    /// enclosing body.
    pub fn visible_handle(&self, name: &str, mut level: LevelId) -> Option<HandleId> {
        loop {
            if let Some(&id) = self.handle_names.get(&(level, name.to_string())) {
                return Some(id);
            }
            let parent = self.levels[level].parent?;
            level = self.nodes[parent].level;
        }
    }

    /// The repeated blocks that hold `node`, innermost first, across
    /// conditional bodies (a node in a body of a repeated conditional node
    /// is repeated with it).
    pub fn repeat_chain(&self, node: NodeId) -> Vec<RepeatId> {
        let mut chain = Vec::new();
        for holder in self.holders(node) {
            let mut at = self.nodes[holder].repeat;
            while let Some(r) = at {
                chain.push(r);
                at = self.repeats[r].parent;
            }
        }
        chain
    }

    /// Whether `node` is inside repeated block `repeat` (at any depth,
    /// across conditional bodies).
    pub fn is_repeated_by(&self, node: NodeId, repeat: RepeatId) -> bool {
        self.repeat_chain(node).contains(&repeat)
    }

    /// The handles a kernel node sets (those it takes as arguments), or a
    /// capture node (those its closure names: its captured kernels set them).
    pub fn handles_set_by(&self, node: NodeId) -> impl Iterator<Item = HandleId> + '_ {
        let node = &self.nodes[node];
        let uses = if matches!(node.kind(), Kind::Kernel | Kind::Capture) {
            &node.uses[..]
        } else {
            &[]
        };
        uses.iter()
            .filter_map(move |ident| self.visible_handle(&ident.to_string(), node.level))
    }
}

/// Graph-wide attributes (`#[device_launch]` and friends).
#[derive(Debug, Default, Clone)]
pub struct GraphAttrs {
    pub device_launch: Option<Span>,
    pub auto_free_on_launch: Option<Span>,
    pub use_node_priority: Option<Span>,
    /// `///` comments and other attributes passed through to the type.
    pub passthrough: Vec<syn::Attribute>,
}

/// What a node is, independent of its operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Kernel,
    Copy,
    Fill,
    Host,
    Empty,
    Child,
    Record,
    Wait,
    Capture,
    Alloc,
    Free,
    If,
    While,
    Switch,
}

impl Kind {
    /// How error messages name it ("a host node").
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Kernel => "a kernel node",
            Kind::Copy => "a copy node",
            Kind::Fill => "a fill node",
            Kind::Host => "a host node",
            Kind::Empty => "an empty node",
            Kind::Child => "a child graph node",
            Kind::Record => "an event record node",
            Kind::Wait => "an event wait node",
            Kind::Capture => "a capture node",
            Kind::Alloc => "an alloc node",
            Kind::Free => "a free node",
            Kind::If => "an `if` node",
            Kind::While => "a `while` node",
            Kind::Switch => "a `switch` node",
        }
    }

    /// The DSL keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            Kind::Kernel => "kernel",
            Kind::Copy => "copy",
            Kind::Fill => "fill",
            Kind::Host => "host",
            Kind::Empty => "empty",
            Kind::Child => "graph",
            Kind::Record => "record",
            Kind::Wait => "wait",
            Kind::Capture => "capture",
            Kind::Alloc => "alloc",
            Kind::Free => "free",
            Kind::If => "if",
            Kind::While => "while",
            Kind::Switch => "switch",
        }
    }

    pub fn is_conditional(self) -> bool {
        matches!(self, Kind::If | Kind::While | Kind::Switch)
    }
}

/// Where a node comes from in the source.
#[derive(Debug, Clone, Copy)]
pub enum Origin<'a> {
    /// A `label: kind ...;` statement.
    Stmt(&'a NodeStmt),
    /// The alloc node of an alloc scope.
    ScopeAlloc(ScopeId),
    /// The free node of an alloc scope.
    ScopeFree(ScopeId),
    /// Where a repeated block starts: no node of the CUDA graph, but the
    /// checks' stand-in for the block as an edge's target (it precedes the
    /// block's first nodes).
    RepeatStart(RepeatId),
    /// Where a repeated block ends: the stand-in for the block as an edge's
    /// source (its last nodes precede it).
    RepeatEnd(RepeatId),
    /// Where a placed fragment starts and ends (stand-ins like a block's).
    PlaceStart(PlaceId),
    PlaceEnd(PlaceId),
}

impl Origin<'_> {
    /// Whether the node stands for a repeated block's or a placed
    /// fragment's start or end (and is not built).
    pub fn is_virtual(&self) -> bool {
        matches!(
            self,
            Origin::RepeatStart(_)
                | Origin::RepeatEnd(_)
                | Origin::PlaceStart(_)
                | Origin::PlaceEnd(_)
        )
    }
}

#[derive(Debug)]
pub struct Node<'a> {
    /// The user's label (for a scope's alloc and free nodes: the buffer name).
    pub label: Ident,
    /// Unique name for DOT and error messages (`buf.free` for a scope's
    /// free, `pro.step` for `step` in the fragment placed as `pro`).
    pub name: String,
    /// The name as a part of generated variable names (`pro__step`).
    pub stem: String,
    /// The innermost placed fragment holding it.
    pub placed: Option<PlaceId>,
    /// What it does, with its operands.
    pub op: Op<'a>,
    pub origin: Origin<'a>,
    pub level: LevelId,
    /// Innermost alloc scope whose body holds this node.
    pub scope: Option<ScopeId>,
    /// Innermost repeated block of this level whose body holds this node.
    pub repeat: Option<RepeatId>,
    /// The innermost of the two: the region this node is a member of.
    pub region: Option<Region>,
    pub attrs: NodeAttrs,
    /// Identifiers the node's operands name (buffers, handles, captures).
    pub uses: Vec<Ident>,
    /// Identifiers a kernel's launch configuration names (host values:
    /// checked only for loop variables outside their block).
    pub config_uses: Vec<Ident>,
    /// Identifiers the operands bind themselves (`let`, closure
    /// parameters, `for`): they name no loop variable of another block.
    pub bound: Vec<Ident>,
    /// Conditional nodes: the handle and the body levels, in source order.
    pub handle: Option<HandleId>,
    pub bodies: Vec<LevelId>,
    /// Alloc and free nodes: the buffer.
    pub buffer: Option<BufferId>,
}

impl Node<'_> {
    /// What kind of node it is (its operation's).
    pub fn kind(&self) -> Kind {
        self.op.kind()
    }
}

/// Per-node attributes.
#[derive(Debug, Default, Clone)]
pub struct NodeAttrs {
    pub disabled: Option<Span>,
    pub priority: Option<(Span, syn::Expr)>,
    pub escape: Option<Span>,
    /// `#[disjoint(x, ..)]`: the node's accesses to these buffers (all, when
    /// the list is empty) do not overlap those of nodes unordered with it,
    /// so the data-race check leaves them out.
    pub disjoint: Option<(Span, Vec<Ident>)>,
}

/// One graph: the top graph or a conditional body.
#[derive(Debug, Default)]
pub struct Level {
    /// The conditional node whose body this is (None for the top graph).
    pub parent: Option<NodeId>,
    pub nodes: Vec<NodeId>,
    pub edges: Vec<Edge>,
}

#[derive(Debug, Clone)]
pub struct Edge {
    pub from: NodeId,
    pub to: NodeId,
    pub kind: EdgeKind,
    /// The tokens `a -> b` that wrote it; None for an alloc scope's implied edge.
    pub tokens: Option<TokenStream>,
    /// Where errors about its kind point (see `EdgeLink::span`).
    pub kind_span: Option<proc_macro2::Span>,
}

/// A block whose nodes act as one in the edges around it: an alloc scope
/// or a repeated block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Region {
    Scope(ScopeId),
    Repeat(RepeatId),
    Place(PlaceId),
}

/// `label: use fragment;`
#[derive(Debug)]
pub struct Place<'a> {
    pub syntax: &'a parse::Placement,
    /// `label`, or `outer.label` in another placement.
    pub name: String,
    pub level: LevelId,
    /// Enclosing region of the same level.
    pub region: Option<Region>,
    /// Its stand-ins in the level.
    pub start: NodeId,
    pub end: NodeId,
}

/// `label: for i in 0..n { ... }`
#[derive(Debug)]
pub struct Repeat<'a> {
    pub syntax: &'a parse::RepeatBlock,
    pub level: LevelId,
    /// Enclosing repeated block of the same level.
    pub parent: Option<RepeatId>,
    /// Enclosing region of the same level.
    pub region: Option<Region>,
    /// Its stand-ins in the level (see `Origin::RepeatStart`).
    pub start: NodeId,
    pub end: NodeId,
    /// Edges between iterations (`a[i-k] -> b`).
    pub carried: Vec<Carried>,
    /// The label as a part of generated variable names.
    pub stem: String,
    /// `#[disjoint(x, ..)]` on the block: for every node in it.
    pub disjoint: Option<(Span, Vec<Ident>)>,
}

/// An edge from a member of a repeated block's body in one iteration to a
/// member `back` iterations later. Ends are the members' exit and entry
/// nodes (for a nested block: its end and start stand-ins).
#[derive(Debug, Clone)]
pub struct Carried {
    pub from: NodeId,
    pub to: NodeId,
    pub back: usize,
    pub kind: EdgeKind,
    pub tokens: TokenStream,
    /// Where errors about its kind point (see `EdgeLink::span`).
    pub kind_span: Span,
}

/// `alloc buf: T[n] { ... }`
#[derive(Debug)]
pub struct Scope<'a> {
    pub syntax: &'a parse::AllocScope,
    pub level: LevelId,
    /// Enclosing scope.
    pub parent: Option<ScopeId>,
    /// Enclosing region of the same level.
    pub region: Option<Region>,
    pub alloc: NodeId,
    pub free: NodeId,
    pub buffer: BufferId,
}

/// The name an operand is, written as it is or in parentheses.
pub(crate) fn bare_name(expr: &syn::Expr) -> Option<&Ident> {
    match expr {
        syn::Expr::Paren(inner) => bare_name(&inner.expr),
        syn::Expr::Group(inner) => bare_name(&inner.expr),
        syn::Expr::Path(path) => path.path.get_ident(),
        _ => None,
    }
}

/// Host memory an operand names (see [`Model::host_memory`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostMemory {
    /// A `host name: T[len];` buffer of the graph.
    Buffer,
    /// A parameter taking a host slice shared (its type, spelled as
    /// written: `&[f32]`).
    ReadOnly(String),
    /// A parameter taking a host slice mutably (its type, as written).
    Mutable(String),
}

impl HostMemory {
    /// How a message names it: "host memory (`&[f32]`)", "a host buffer".
    pub fn describe(&self) -> String {
        match self {
            HostMemory::Buffer => "a host buffer".to_string(),
            HostMemory::ReadOnly(ty) | HostMemory::Mutable(ty) => format!("host memory (`{ty}`)"),
        }
    }
}

/// `cond c;` / `cond c = 1;`
#[derive(Debug)]
pub struct Handle<'a> {
    pub syntax: &'a parse::CondDecl,
    pub level: LevelId,
    /// The repeated blocks around its declaration, innermost first, across
    /// conditional bodies (each iteration declares its own handle).
    pub repeats: Vec<RepeatId>,
    /// The conditional nodes it drives (more than one is an error).
    pub drives: Vec<NodeId>,
    /// Whether a conditional node names it, even one refused for another
    /// reason, or its declaration was refused (in a fragment): that error
    /// then stands alone, none says that the handle drives nothing.
    pub named: bool,
}

impl Handle<'_> {
    /// Whether it is declared once, at the graph's top level (outside
    /// repeated blocks and bodies): a named graph's `bound()` holds it.
    pub fn is_top_level(&self) -> bool {
        self.level == TOP && self.repeats.is_empty()
    }
}

/// A graph allocation.
#[derive(Debug)]
pub struct Buffer {
    pub name: Ident,
    pub alloc: NodeId,
    pub scope: Option<ScopeId>,
    pub escape: bool,
    pub frees: Vec<NodeId>,
}

/// An operand that references a caller's variable (the expression form):
/// `&x`, `&mut x`, or the same through a reference, `&*x` and `&mut *x`
/// (`x` a `&mut CudaSlice` parameter, whose binding is not `mut`).
#[derive(Debug, Clone)]
pub struct Referenced {
    pub ident: Ident,
    pub mutable: bool,
    pub deref: bool,
}

impl Referenced {
    /// How a reference to it is written: `&`, `&mut `, `&*` or `&mut *`.
    pub fn prefix(mutable: bool, deref: bool) -> &'static str {
        match (mutable, deref) {
            (true, false) => "&mut ",
            (true, true) => "&mut *",
            (false, false) => "&",
            (false, true) => "&*",
        }
    }
}

/// The [`Referenced`] variable an operand is, if it is one.
pub fn place(expr: &syn::Expr) -> Option<Referenced> {
    let syn::Expr::Reference(reference) = expr else {
        return None;
    };
    let (inner, deref) = through_deref(&reference.expr);
    let syn::Expr::Path(path) = inner else {
        return None;
    };
    Some(Referenced {
        ident: path.path.get_ident()?.clone(),
        mutable: reference.mutability.is_some(),
        deref,
    })
}

/// `x` of `*x` (and whether there was a `*`); any other expression as it is.
pub fn through_deref(expr: &syn::Expr) -> (&syn::Expr, bool) {
    match expr {
        syn::Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => (&unary.expr, true),
        other => (other, false),
    }
}
