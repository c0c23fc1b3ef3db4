//! The resolved graph: nodes in source order, the graph levels they live in
//! (the top graph and one level per conditional body), edges between node
//! ids, graph allocations and conditional handles.
//!
//! Lowering resolves names (labels, buffers, handles) and reports the errors
//! that resolution finds: duplicate and unknown labels, edges that cross a
//! conditional body, unknown handles, bad attributes. Ordering rules live in
//! `check`.

use crate::diag::Diagnostics;
use crate::parse::{self, Block, EdgeKind, GraphDef, NodeStmt, Stmt};
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use std::collections::HashMap;
use syn::Ident;

pub type NodeId = usize;
pub type LevelId = usize;
pub type ScopeId = usize;
pub type HandleId = usize;
pub type BufferId = usize;

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
    /// Handles by name, per declaring level.
    handle_names: HashMap<(LevelId, String), HandleId>,
}

impl Model<'_> {
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

    /// The handles a kernel node sets (those it takes as arguments), or a
    /// capture node (those its closure names: its captured kernels set them).
    pub fn handles_set_by(&self, node: NodeId) -> impl Iterator<Item = HandleId> + '_ {
        let node = &self.nodes[node];
        let uses = if matches!(node.kind, Kind::Kernel | Kind::Capture) {
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
}

#[derive(Debug)]
pub struct Node<'a> {
    /// The user's label (for a scope's alloc and free nodes: the buffer name).
    pub label: Ident,
    /// Unique name for DOT and error messages (`buf.free` for a scope's free).
    pub name: String,
    pub kind: Kind,
    pub origin: Origin<'a>,
    pub level: LevelId,
    /// Innermost alloc scope whose body holds this node.
    pub scope: Option<ScopeId>,
    pub attrs: NodeAttrs,
    /// Identifiers the node's operands name (buffers, handles, captures).
    pub uses: Vec<Ident>,
    /// Conditional nodes: the handle and the body levels, in source order.
    pub handle: Option<HandleId>,
    pub bodies: Vec<LevelId>,
    /// Alloc and free nodes: the buffer.
    pub buffer: Option<BufferId>,
}

/// Per-node attributes.
#[derive(Debug, Default, Clone)]
pub struct NodeAttrs {
    pub disabled: Option<Span>,
    pub priority: Option<(Span, syn::Expr)>,
    pub escape: Option<Span>,
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

/// `alloc buf: T[n] { ... }`
#[derive(Debug)]
pub struct Scope<'a> {
    pub syntax: &'a parse::AllocScope,
    pub level: LevelId,
    /// Enclosing scope.
    pub parent: Option<ScopeId>,
    pub alloc: NodeId,
    pub free: NodeId,
    pub buffer: BufferId,
}

/// `cond c;` / `cond c = 1;`
#[derive(Debug)]
pub struct Handle<'a> {
    pub syntax: &'a parse::CondDecl,
    pub level: LevelId,
    /// The conditional nodes it drives (more than one is an error).
    pub drives: Vec<NodeId>,
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

/// What a label in an edge names.
#[derive(Debug, Clone, Copy)]
enum LabelTarget {
    Node(NodeId),
    /// An alloc scope: as a source its free node, as a target its alloc node.
    Scope(ScopeId),
}

/// Builds the model, reporting resolution errors into `diag`.
pub fn lower<'a>(def: &'a GraphDef, diag: &Diagnostics) -> Model<'a> {
    let mut lowering = Lowering {
        model: Model {
            def,
            attrs: graph_attrs(&def.attrs, diag),
            nodes: Vec::new(),
            levels: vec![Level::default()],
            scopes: Vec::new(),
            handles: Vec::new(),
            buffers: Vec::new(),
            handle_names: HashMap::new(),
        },
        diag,
        labels: HashMap::new(),
        buffer_names: HashMap::new(),
        edge_stmts: Vec::new(),
        frees: Vec::new(),
        conditionals: Vec::new(),
    };
    lowering.collect(&def.body, TOP, None);
    lowering.resolve_handles();
    lowering.resolve_buffers();
    lowering.resolve_edges();
    lowering.add_scope_edges();
    lowering.model
}

struct Lowering<'a, 'd> {
    model: Model<'a>,
    diag: &'d Diagnostics,
    labels: HashMap<String, LabelTarget>,
    buffer_names: HashMap<String, BufferId>,
    /// Edge statements with the level whose block holds them.
    edge_stmts: Vec<(&'a parse::EdgeStmt, LevelId)>,
    /// Free nodes with the buffer name they free.
    frees: Vec<(NodeId, &'a Ident)>,
    /// Conditional nodes with the handle identifier they name.
    conditionals: Vec<(NodeId, &'a Ident)>,
}

impl<'a> Lowering<'a, '_> {
    fn collect(&mut self, block: &'a Block, level: LevelId, scope: Option<ScopeId>) {
        for stmt in &block.stmts {
            match stmt {
                Stmt::Node(node) => self.collect_node(node, level, scope),
                Stmt::Edge(edge) => self.edge_stmts.push((edge, level)),
                Stmt::Cond(decl) => self.collect_handle(decl, level),
                Stmt::Scope(syntax) => self.collect_scope(syntax, level, scope),
            }
        }
    }

    fn register_label(&mut self, label: &Ident, target: LabelTarget) {
        match self.labels.entry(label.to_string()) {
            std::collections::hash_map::Entry::Occupied(entry) => self.diag.error_with_help(
                label,
                format!("the label `{}` is defined more than once", entry.key()),
                "labels name nodes and alloc scopes, and must be unique in one cuda_graph!",
            ),
            std::collections::hash_map::Entry::Vacant(entry) => {
                entry.insert(target);
            }
        }
    }

    fn push_node(&mut self, node: Node<'a>) -> NodeId {
        let id = self.model.nodes.len();
        self.model.levels[node.level].nodes.push(id);
        self.model.nodes.push(node);
        id
    }

    fn collect_node(&mut self, stmt: &'a NodeStmt, level: LevelId, scope: Option<ScopeId>) {
        use parse::NodeKind as K;
        let kind = match &stmt.kind {
            K::Kernel(_) => Kind::Kernel,
            K::Copy { .. } => Kind::Copy,
            K::Fill { .. } => Kind::Fill,
            K::Host { .. } => Kind::Host,
            K::Empty { .. } => Kind::Empty,
            K::Child { .. } => Kind::Child,
            K::Record { .. } => Kind::Record,
            K::Wait { .. } => Kind::Wait,
            K::Capture { .. } => Kind::Capture,
            K::Alloc { .. } => Kind::Alloc,
            K::Free { .. } => Kind::Free,
            K::If { .. } => Kind::If,
            K::While { .. } => Kind::While,
            K::Switch { .. } => Kind::Switch,
        };
        let attrs = node_attrs(&stmt.attrs, self.diag);
        let id = self.push_node(Node {
            label: stmt.label.clone(),
            name: stmt.label.to_string(),
            kind,
            origin: Origin::Stmt(stmt),
            level,
            scope,
            attrs,
            uses: operand_idents(&stmt.kind),
            handle: None,
            bodies: Vec::new(),
            buffer: None,
        });
        self.register_label(&stmt.label, LabelTarget::Node(id));
        match &stmt.kind {
            K::Alloc { .. } => {
                let escape = self.model.nodes[id].attrs.escape.is_some();
                self.add_buffer(&stmt.label, id, None, escape);
            }
            K::Free { buffer, .. } => self.frees.push((id, buffer)),
            K::If {
                handle,
                then_body,
                else_body,
                ..
            } => {
                self.conditionals.push((id, handle));
                self.collect_body(id, then_body);
                if let Some(body) = else_body {
                    self.collect_body(id, body);
                }
            }
            K::While { handle, body, .. } => {
                self.conditionals.push((id, handle));
                self.collect_body(id, body);
            }
            K::Switch { handle, arms, .. } => {
                self.conditionals.push((id, handle));
                for arm in arms {
                    self.collect_body(id, &arm.body);
                }
            }
            _ => {}
        }
    }

    fn collect_body(&mut self, parent: NodeId, block: &'a Block) {
        let level = self.model.levels.len();
        self.model.levels.push(Level {
            parent: Some(parent),
            ..Level::default()
        });
        self.model.nodes[parent].bodies.push(level);
        self.collect(block, level, None);
    }

    fn add_buffer(&mut self, name: &Ident, alloc: NodeId, scope: Option<ScopeId>, escape: bool) {
        let id = self.model.buffers.len();
        self.model.buffers.push(Buffer {
            name: name.clone(),
            alloc,
            scope,
            escape,
            frees: Vec::new(),
        });
        self.model.nodes[alloc].buffer = Some(id);
        // A duplicate name was reported as a duplicate label; the first wins.
        self.buffer_names.entry(name.to_string()).or_insert(id);
    }

    fn collect_handle(&mut self, decl: &'a parse::CondDecl, level: LevelId) {
        if let Some(attr) = decl.attrs.first() {
            self.diag
                .error(attr, "attributes are not allowed on conditional handles");
        }
        let key = (level, decl.name.to_string());
        if self.model.handle_names.contains_key(&key) {
            self.diag.error(
                &decl.name,
                format!(
                    "the conditional handle `{}` is declared more than once",
                    decl.name
                ),
            );
            return;
        }
        let id = self.model.handles.len();
        self.model.handles.push(Handle {
            syntax: decl,
            level,
            drives: Vec::new(),
        });
        self.model.handle_names.insert(key, id);
    }

    fn collect_scope(
        &mut self,
        syntax: &'a parse::AllocScope,
        level: LevelId,
        parent: Option<ScopeId>,
    ) {
        let attrs = node_attrs(&syntax.attrs, self.diag);
        if let Some(span) = attrs.escape {
            self.diag.error_at(
                span,
                crate::diag::with_help(
                    "an alloc scope's buffer is freed at the end of its scope and cannot escape",
                    "use `buf: alloc T[n];` to hand an allocation to the caller",
                ),
            );
        }
        if let Some(span) = attrs.disabled.or(attrs.priority.as_ref().map(|p| p.0)) {
            self.diag
                .error_at(span, "this attribute does not apply to an alloc scope");
        }
        let id = self.model.scopes.len();
        let buffer_name = syntax.buffer.to_string();
        let make = |kind, origin, name: String| Node {
            label: syntax.buffer.clone(),
            name,
            kind,
            origin,
            level,
            scope: parent,
            attrs: NodeAttrs::default(),
            uses: Vec::new(),
            handle: None,
            bodies: Vec::new(),
            buffer: None,
        };
        let alloc = self.push_node(make(
            Kind::Alloc,
            Origin::ScopeAlloc(id),
            buffer_name.clone(),
        ));
        self.register_label(&syntax.buffer, LabelTarget::Scope(id));
        self.model.scopes.push(Scope {
            syntax,
            level,
            parent,
            alloc,
            free: usize::MAX,
            buffer: self.model.buffers.len(),
        });
        self.add_buffer(&syntax.buffer, alloc, Some(id), false);
        self.collect(&syntax.body, level, Some(id));
        let free = self.push_node(make(
            Kind::Free,
            Origin::ScopeFree(id),
            format!("{buffer_name}.free"),
        ));
        let buffer = self.model.scopes[id].buffer;
        self.model.nodes[free].buffer = Some(buffer);
        self.model.buffers[buffer].frees.push(free);
        self.model.scopes[id].free = free;
    }

    fn resolve_handles(&mut self) {
        for &(node, ident) in &self.conditionals {
            let level = self.model.nodes[node].level;
            match self.model.visible_handle(&ident.to_string(), level) {
                Some(handle) => {
                    self.model.nodes[node].handle = Some(handle);
                    self.model.handles[handle].drives.push(node);
                }
                None => self.diag.error_with_help(
                    ident,
                    format!("unknown conditional handle `{ident}`"),
                    format!(
                        "declare it with `cond {ident};` (or `cond {ident} = 0;` for a default) \
                         in this graph or an enclosing body"
                    ),
                ),
            }
        }
    }

    fn resolve_buffers(&mut self) {
        let mut freed_params: Vec<(String, NodeId)> = Vec::new();
        for &(node, ident) in &self.frees {
            let name = ident.to_string();
            let Some(&buffer) = self.buffer_names.get(&name) else {
                let param = self.model.def.params.iter().find(|p| p.name == *ident);
                if param.is_some_and(|p| is_escaped_type(&p.ty)) {
                    // An allocation another graph made: freed here once (the
                    // runtime checks that its uses are ordered before).
                    match freed_params.iter().find(|(n, _)| *n == name) {
                        Some(&(_, first)) => self.diag.error_with_help(
                            ident,
                            format!("`{name}` is freed twice"),
                            format!("it is already freed by `{}`", self.model.nodes[first].name),
                        ),
                        None => freed_params.push((name, node)),
                    }
                    continue;
                }
                let is_param = param.is_some();
                let what = if is_param {
                    format!("`{name}` is a parameter of the graph")
                } else {
                    format!("`{name}` is not allocated by this graph")
                };
                self.diag.error_with_help(
                    ident,
                    format!("cannot free `{name}`: {what}"),
                    "only buffers made by `alloc` in this graph, and parameters of type \
                     `Escaped<T>` (allocations another graph made), can be freed; memory that \
                     comes from outside is freed by its owner",
                );
                continue;
            };
            self.model.nodes[node].buffer = Some(buffer);
            let buf = &self.model.buffers[buffer];
            if buf.scope.is_some() {
                self.diag.error_with_help(
                    ident,
                    format!("`{name}` is freed by its alloc scope and cannot be freed here"),
                    "remove this free node; the scope frees the buffer after its last node",
                );
                continue;
            }
            if buf.escape {
                self.diag.error_with_help(
                    ident,
                    format!("`{name}` is marked `#[escape]` and cannot be freed by the graph"),
                    "remove `#[escape]` to free it here, or remove this free node",
                );
            }
            if let Some(&first) = buf.frees.first() {
                self.diag.error_with_help(
                    ident,
                    format!("`{name}` is freed twice"),
                    format!("it is already freed by `{}`", self.model.nodes[first].name),
                );
            }
            self.model.buffers[buffer].frees.push(node);
        }
    }

    /// Resolves a label used in an edge written in `level`, reporting an
    /// unknown label or one from another conditional body.
    fn resolve_label(&self, label: &Ident, level: LevelId) -> Option<LabelTarget> {
        let name = label.to_string();
        let Some(&target) = self.labels.get(&name) else {
            self.report_unknown_label(label, level);
            return None;
        };
        let node_level = self.model.nodes[self.source_of(target)].level;
        if node_level != level {
            let (message, help) = self.crossing_message(&name, level, node_level);
            self.diag.error_with_help(label, message, help);
            return None;
        }
        Some(target)
    }

    /// The node an edge leaves from when it names `target` as its source.
    fn source_of(&self, target: LabelTarget) -> NodeId {
        match target {
            LabelTarget::Node(id) => id,
            LabelTarget::Scope(scope) => self.model.scopes[scope].free,
        }
    }

    /// The node an edge enters when it names `target` as its target.
    fn target_of(&self, target: LabelTarget) -> NodeId {
        match target {
            LabelTarget::Node(id) => id,
            LabelTarget::Scope(scope) => self.model.scopes[scope].alloc,
        }
    }

    fn crossing_message(
        &self,
        name: &str,
        edge_level: LevelId,
        node_level: LevelId,
    ) -> (String, String) {
        let body_of = |level: LevelId| {
            self.model.levels[level]
                .parent
                .map(|p| self.model.nodes[p].name.clone())
        };
        match (body_of(edge_level), body_of(node_level)) {
            (Some(here), _) if self.is_inside(node_level, edge_level) => (
                format!("edge crosses a conditional body's boundary: `{name}` is inside a body nested in `{here}`'s body"),
                "an edge joins nodes of the same body; order the nested conditional node instead".to_string(),
            ),
            // Two bodies of one conditional node (then/else, switch arms).
            (Some(here), Some(_))
                if self.model.levels[edge_level].parent == self.model.levels[node_level].parent =>
            {
                (
                    format!("edge crosses a conditional body's boundary: `{name}` is in another body of `{here}` (another branch or arm)"),
                    format!("the bodies of `{here}` are separate graphs, and only one runs per launch; an edge joins nodes of the same body"),
                )
            }
            (Some(here), _) => (
                format!("edge crosses a conditional body's boundary: `{name}` is outside the body of `{here}`"),
                format!("a conditional body is its own graph; order `{here}` itself in the enclosing graph"),
            ),
            (None, Some(there)) => (
                format!("edge crosses a conditional body's boundary: `{name}` is inside the body of `{there}`"),
                format!("a conditional body is its own graph; write this edge inside the body, or use `{there}` here"),
            ),
            (None, None) => (
                format!("edge crosses a conditional body's boundary at `{name}`"),
                "an edge joins nodes of the same graph".to_string(),
            ),
        }
    }

    /// Whether `inner` is nested (at any depth) inside `outer`.
    fn is_inside(&self, mut inner: LevelId, outer: LevelId) -> bool {
        while let Some(parent) = self.model.levels[inner].parent {
            inner = self.model.nodes[parent].level;
            if inner == outer {
                return true;
            }
        }
        false
    }

    fn report_unknown_label(&self, label: &Ident, level: LevelId) {
        let name = label.to_string();
        let message = format!("unknown label `{name}`");
        if self.model.visible_handle(&name, level).is_some() {
            self.diag.error_with_help(
                label,
                message,
                format!("`{name}` is a conditional handle; edges join nodes, such as the conditional node that `{name}` drives"),
            );
        } else if let Some(similar) = self.similar_label(&name) {
            self.diag.error_with_help(
                label,
                message,
                format!("a node with a similar label exists: `{similar}`"),
            );
        } else {
            self.diag.error_with_help(
                label,
                message,
                "an edge names nodes by their labels, as in `label: kernel ...;`",
            );
        }
    }

    fn similar_label(&self, name: &str) -> Option<&str> {
        self.labels
            .keys()
            .map(|candidate| (strsim::jaro_winkler(name, candidate), candidate))
            // Jaro-Winkler misses one-letter slips in short labels (`abd`
            // for `abc` scores 0.82): one edit is close enough there.
            .filter(|(score, candidate)| {
                *score > 0.85
                    || (name.len() >= 2 && strsim::damerau_levenshtein(name, candidate) <= 1)
            })
            .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))
            .map(|(_, candidate)| candidate.as_str())
    }

    fn resolve_edges(&mut self) {
        let mut seen: HashMap<(NodeId, NodeId), ()> = HashMap::new();
        for &(stmt, level) in &self.edge_stmts {
            let resolved: Vec<Vec<(LabelTarget, &Ident)>> = stmt
                .groups
                .iter()
                .map(|group| {
                    group
                        .labels
                        .iter()
                        .filter_map(|label| Some((self.resolve_label(label, level)?, label)))
                        .collect()
                })
                .collect();
            for (i, link) in stmt.links.iter().enumerate() {
                for &(from_target, from_label) in &resolved[i] {
                    let from = self.source_of(from_target);
                    for &(to_target, to_label) in &resolved[i + 1] {
                        let to = self.target_of(to_target);
                        let tokens = edge_tokens(from_label, &link.tokens, to_label);
                        if from_label == to_label {
                            self.diag.error_with_help(
                                tokens,
                                format!("self-edge: `{from_label} -> {to_label}` makes `{from_label}` depend on itself"),
                                "remove this edge",
                            );
                            continue;
                        }
                        if seen.insert((from, to), ()).is_some() {
                            self.diag.error_with_help(
                                tokens,
                                format!("duplicate edge `{from_label} -> {to_label}`"),
                                "this dependency is already declared; remove one of them",
                            );
                            continue;
                        }
                        self.model.levels[level].edges.push(Edge {
                            from,
                            to,
                            kind: link.kind,
                            tokens: Some(tokens),
                            kind_span: Some(link.span),
                        });
                    }
                }
            }
        }
    }

    /// Adds the edges an alloc scope implies: its alloc node before every
    /// source of its body, every sink of its body before its free node.
    fn add_scope_edges(&mut self) {
        let scope_count = self.model.scopes.len();
        if scope_count == 0 {
            return;
        }
        // has_pred[n] / has_succ[n]: whether the body member `n` of its
        // scope has an edge from / to another member of the same scope.
        let mut has_pred = vec![false; self.model.nodes.len()];
        let mut has_succ = vec![false; self.model.nodes.len()];
        for level in &self.model.levels {
            for edge in &level.edges {
                if let Some((from_member, to_member)) =
                    self.members_in_common_scope(edge.from, edge.to)
                {
                    has_succ[from_member] = true;
                    has_pred[to_member] = true;
                }
            }
        }
        let mut implied: Vec<(LevelId, NodeId, NodeId)> = Vec::new();
        // Direct members of each scope, in source order: nodes whose scope is
        // it, and nested scopes (represented by their alloc node).
        let mut members: Vec<Vec<NodeId>> = vec![Vec::new(); scope_count];
        for (id, node) in self.model.nodes.iter().enumerate() {
            let Some(scope) = node.scope else { continue };
            match node.origin {
                Origin::ScopeFree(_) => {}
                _ => members[scope].push(id),
            }
        }
        for (scope_id, scope) in self.model.scopes.iter().enumerate() {
            let level = scope.level;
            if members[scope_id].is_empty() {
                implied.push((level, scope.alloc, scope.free));
                continue;
            }
            for &member in &members[scope_id] {
                // A nested scope is entered at its alloc node and left at its free node.
                let (entry, exit) = match self.model.nodes[member].origin {
                    Origin::ScopeAlloc(inner) => (member, self.model.scopes[inner].free),
                    _ => (member, member),
                };
                if !has_pred[member] {
                    implied.push((level, scope.alloc, entry));
                }
                if !has_succ[member] {
                    implied.push((level, exit, scope.free));
                }
            }
        }
        for (level, from, to) in implied {
            let edges = &mut self.model.levels[level].edges;
            if !edges.iter().any(|e| e.from == from && e.to == to) {
                edges.push(Edge {
                    from,
                    to,
                    kind: EdgeKind::Full,
                    tokens: None,
                    kind_span: None,
                });
            }
        }
    }

    /// For an edge between two nodes of one level: the members (direct
    /// children, a nested scope standing as its alloc node) of the innermost
    /// scope holding both, if any.
    fn members_in_common_scope(&self, from: NodeId, to: NodeId) -> Option<(NodeId, NodeId)> {
        let chain = |node: NodeId| {
            // (scope, member of that scope holding `node`), innermost first.
            let mut out = Vec::new();
            let mut member = node;
            let mut scope = self.model.nodes[node].scope;
            // A scope's own free node stands for the scope like its alloc node.
            if let Origin::ScopeFree(s) = self.model.nodes[node].origin {
                member = self.model.scopes[s].alloc;
            }
            while let Some(s) = scope {
                out.push((s, member));
                member = self.model.scopes[s].alloc;
                scope = self.model.scopes[s].parent;
            }
            out
        };
        let from_chain = chain(from);
        let to_chain = chain(to);
        for &(scope, to_member) in &to_chain {
            if let Some(&(_, from_member)) = from_chain.iter().find(|(s, _)| *s == scope) {
                if from_member != to_member {
                    return Some((from_member, to_member));
                }
                return None;
            }
        }
        None
    }
}

/// The tokens `from -> to` as written, for spanning an error over an edge.
fn edge_tokens(from: &Ident, arrow: &TokenStream, to: &Ident) -> TokenStream {
    let mut tokens = from.to_token_stream();
    tokens.extend(arrow.clone());
    to.to_tokens(&mut tokens);
    tokens
}

fn graph_attrs(attrs: &[syn::Attribute], diag: &Diagnostics) -> GraphAttrs {
    let mut out = GraphAttrs::default();
    for attr in attrs {
        let path = attr.path();
        let slot = if path.is_ident("device_launch") {
            &mut out.device_launch
        } else if path.is_ident("auto_free_on_launch") {
            &mut out.auto_free_on_launch
        } else if path.is_ident("use_node_priority") {
            &mut out.use_node_priority
        } else if path.is_ident("doc") || path.is_ident("allow") || path.is_ident("cfg_attr") {
            out.passthrough.push(attr.clone());
            continue;
        } else {
            diag.error_with_help(
                path,
                format!("unknown graph attribute `{}`", path.to_token_stream()),
                "graph attributes are `#[device_launch]`, `#[auto_free_on_launch]` and `#[use_node_priority]`",
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

fn node_attrs(attrs: &[syn::Attribute], diag: &Diagnostics) -> NodeAttrs {
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
                "node attributes are `#[disabled]`, `#[priority(N)]` and, on alloc nodes, `#[escape]`",
            );
            false
        };
        if duplicate {
            diag.error(attr, "duplicate node attribute");
        }
    }
    out
}

/// The identifiers a node's operands name: single-segment paths, not field
/// names (`x.buf`) nor path segments (`m::buf`).
fn operand_idents(kind: &parse::NodeKind) -> Vec<Ident> {
    use parse::NodeKind as K;
    let mut tokens = TokenStream::new();
    match kind {
        K::Kernel(k) => k.args.to_tokens(&mut tokens),
        K::Copy { src, dst, .. } => {
            src.to_tokens(&mut tokens);
            dst.to_tokens(&mut tokens);
        }
        K::Fill { dst, value, .. } => {
            dst.to_tokens(&mut tokens);
            value.to_tokens(&mut tokens);
        }
        K::Host { closure, .. } => closure.to_tokens(&mut tokens),
        K::Child { graph, .. } => graph.to_tokens(&mut tokens),
        K::Record { event, .. } | K::Wait { event, .. } => event.to_tokens(&mut tokens),
        K::Capture {
            stream, closure, ..
        } => {
            stream.to_tokens(&mut tokens);
            closure.body.to_tokens(&mut tokens);
        }
        K::Empty { .. }
        | K::Alloc { .. }
        | K::Free { .. }
        | K::If { .. }
        | K::While { .. }
        | K::Switch { .. } => {}
    }
    let mut out = Vec::new();
    collect_idents(tokens, &mut out);
    out
}

fn collect_idents(tokens: TokenStream, out: &mut Vec<Ident>) {
    let mut prev_punct: Option<char> = None;
    let mut iter = tokens.into_iter().peekable();
    while let Some(tt) = iter.next() {
        match tt {
            TokenTree::Ident(ident) => {
                let next_is_path =
                    matches!(iter.peek(), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                if !matches!(prev_punct, Some('.') | Some(':')) && !next_is_path {
                    out.push(ident);
                }
                prev_punct = None;
            }
            TokenTree::Punct(p) => prev_punct = Some(p.as_char()),
            TokenTree::Group(g) => {
                collect_idents(g.stream(), out);
                prev_punct = None;
            }
            TokenTree::Literal(_) => prev_punct = None,
        }
    }
}

/// Whether a parameter's type is `Escaped<T>` (an allocation another
/// graph's launch made, which this graph may free).
fn is_escaped_type(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(path) if path.path.segments.last().is_some_and(|s| s.ident == "Escaped"))
}

/// `&x` -> (x, false); `&mut x` -> (x, true).
pub fn place(expr: &syn::Expr) -> Option<(Ident, bool)> {
    let syn::Expr::Reference(reference) = expr else {
        return None;
    };
    let syn::Expr::Path(path) = &*reference.expr else {
        return None;
    };
    let ident = path.path.get_ident()?;
    Some((ident.clone(), reference.mutability.is_some()))
}
