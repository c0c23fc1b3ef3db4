//! Lowering, first pass: collects nodes, levels, scopes, buffers and
//! handles from the syntax tree, registering labels.

use super::attrs::{graph_attrs, node_attrs};
use super::operand_idents::{bound_idents, config_idents, operand_idents};
use super::*;
use crate::diag::Diagnostics;
use crate::parse::{self, Block, GraphDef, NodeStmt, Stmt};
use rustc_hash::FxHashMap;
use syn::Ident;

/// What a label in an edge names.
#[derive(Debug, Clone, Copy)]
pub(super) enum LabelTarget {
    Node(NodeId),
    /// An alloc scope: as a source its free node, as a target its alloc node.
    Scope(ScopeId),
    /// A repeated block: as a source its end, as a target its start.
    Repeat(RepeatId),
    /// A placed fragment, likewise.
    Place(PlaceId),
}

/// Where a statement sits in its level: the innermost alloc scope and
/// repeated block around it, and the innermost of the two.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Context {
    pub scope: Option<ScopeId>,
    pub repeat: Option<RepeatId>,
    pub region: Option<Region>,
    pub place: Option<PlaceId>,
}

/// Builds the model, reporting resolution errors into `diag`.
pub fn lower<'a>(def: &'a GraphDef, diag: &Diagnostics) -> Model<'a> {
    let mut lowering = Lowering {
        model: Model {
            def,
            attrs: graph_attrs(&def.attrs, def.name.is_some(), diag),
            nodes: Vec::new(),
            levels: vec![Level::default()],
            scopes: Vec::new(),
            handles: Vec::new(),
            buffers: Vec::new(),
            repeats: Vec::new(),
            places: Vec::new(),
            host_buffers: Vec::new(),
            device_buffers: Vec::new(),
            dropped_edges: false,
            handle_names: FxHashMap::default(),
            buffer_names: FxHashMap::default(),
        },
        diag,
        labels: FxHashMap::default(),
        edge_stmts: Vec::new(),
        frees: Vec::new(),
        conditionals: Vec::new(),
        fragments: FxHashMap::default(),
        prefix: String::new(),
        placing: Vec::new(),
        placed_fragments: Vec::new(),
    };
    for stmt in &def.body.stmts {
        if let Stmt::Fragment(fragment) = stmt {
            lowering.declare_fragment(fragment);
        }
    }
    lowering.collect(&def.body, TOP, Context::default());
    lowering.check_fragments_placed(def);
    lowering.resolve_handles();
    lowering.check_setters_in_blocks();
    lowering.check_loop_vars_in_scope();
    lowering.resolve_buffers();
    lowering.resolve_host_uses();
    lowering.resolve_edges();
    lowering.add_scope_edges();
    lowering.model
}

pub(super) struct Lowering<'a, 'd> {
    pub(super) model: Model<'a>,
    pub(super) diag: &'d Diagnostics,
    pub(super) labels: FxHashMap<String, LabelTarget>,
    /// Edge statements with the level, repeated block and label prefix
    /// (of the placed fragment) holding them.
    pub(super) edge_stmts: Vec<(&'a parse::EdgeStmt, LevelId, Option<RepeatId>, String)>,
    /// Fragments by name.
    pub(super) fragments: FxHashMap<String, &'a parse::Fragment>,
    /// Prefix of labels collected now: `pro.` inside the placement `pro`.
    pub(super) prefix: String,
    /// Fragments being placed, outermost first (a fragment inside itself
    /// would never end).
    pub(super) placing: Vec<String>,
    /// Fragments placed at least once.
    pub(super) placed_fragments: Vec<String>,
    /// Free nodes with the buffer name they free.
    pub(super) frees: Vec<(NodeId, &'a Ident)>,
    /// Conditional nodes with the handle identifier they name.
    pub(super) conditionals: Vec<(NodeId, &'a Ident)>,
}

impl<'a> Lowering<'a, '_> {
    pub(super) fn collect(&mut self, block: &'a Block, level: LevelId, ctx: Context) {
        for stmt in &block.stmts {
            match stmt {
                Stmt::Node(node) => self.collect_node(node, level, ctx),
                Stmt::Edge(edge) => {
                    self.edge_stmts
                        .push((edge, level, ctx.repeat, self.prefix.clone()))
                }
                Stmt::Cond(decl) => {
                    if self.refused_in_fragment(decl.keyword, "a `cond` handle") {
                        // Declared once all the same, so that its uses
                        // resolve (no error for each of them).
                        let key = (level, decl.name.to_string());
                        if !self.model.handle_names.contains_key(&key) {
                            self.collect_handle(decl, level, ctx, true);
                        }
                        continue;
                    }
                    self.collect_handle(decl, level, ctx, false)
                }
                Stmt::Scope(syntax) => {
                    if self.refused_in_fragment(syntax.keyword, "an alloc scope") {
                        continue;
                    }
                    self.collect_scope(syntax, level, ctx)
                }
                Stmt::Repeat(syntax) => self.collect_repeat(syntax, level, ctx),
                Stmt::Host(decl) => self.collect_host_buffer(decl, level, ctx),
                Stmt::Buffer(decl) => self.collect_device_buffer(decl, level, ctx),
                Stmt::Fragment(fragment) => {
                    // Declared before collection, at the graph's top.
                    if level != TOP || ctx.region.is_some() || !self.prefix.is_empty() {
                        self.diag.error_with_help(
                            fragment.keyword,
                            "a fragment is declared at the top of the graph's body",
                            "move `fragment name { ... }` out of this block; place it here with `label: use name;`",
                        );
                    }
                }
                Stmt::Place(syntax) => self.collect_place(syntax, level, ctx),
            }
        }
    }

    pub(super) fn register_label(&mut self, label: &Ident, target: LabelTarget) {
        refuse_raw(label, self.diag);
        match self.labels.entry(format!("{}{label}", self.prefix)) {
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

    pub(super) fn push_node(&mut self, mut node: Node<'a>) -> NodeId {
        let id = self.model.nodes.len();
        // A generated variable's name comes from the stem: the label where
        // that is unique; else one led by the node's index, which no label
        // can be (a placed fragment's nodes, the stand-ins of blocks).
        if node.placed.is_some() || node.origin.is_virtual() {
            node.stem = format!("{id}_{}", node.label);
        }
        self.model.levels[node.level].nodes.push(id);
        self.model.nodes.push(node);
        id
    }

    fn collect_node(&mut self, stmt: &'a NodeStmt, level: LevelId, ctx: Context) {
        use parse::NodeKind as K;
        let op = Op::of(stmt);
        let attrs = node_attrs(&stmt.attrs, self.diag);
        let name = self.qualified(&stmt.label);
        let stem = stmt.label.to_string();
        let id = self.push_node(Node {
            label: stmt.label.clone(),
            name,
            stem,
            placed: ctx.place,
            op,
            origin: Origin::Stmt(stmt),
            level,
            scope: ctx.scope,
            repeat: ctx.repeat,
            region: ctx.region,
            attrs,
            uses: operand_idents(&op),
            config_uses: config_idents(&op),
            bound: bound_idents(&op),
            handle: None,
            bodies: Vec::new(),
            buffer: None,
        });
        self.register_label(&stmt.label, LabelTarget::Node(id));
        match &stmt.kind {
            K::Alloc { .. } | K::Free { .. } if !self.placing.is_empty() => {
                self.refused_in_fragment(&stmt.label, "a graph memory node");
            }
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
        self.collect(block, level, Context::default());
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
        self.model
            .buffer_names
            .entry(name.to_string())
            .or_insert(id);
    }

    /// `refused`: its declaration was an error already (in a fragment),
    /// as a raw name is (no conditional node can name it).
    fn collect_handle(
        &mut self,
        decl: &'a parse::CondDecl,
        level: LevelId,
        ctx: Context,
        refused: bool,
    ) {
        let named = refuse_raw(&decl.name, self.diag) || refused;
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
        let repeats = self.repeats_around(level, ctx);
        self.model.handles.push(Handle {
            syntax: decl,
            level,
            repeats,
            drives: Vec::new(),
            named,
        });
        self.model.handle_names.insert(key, id);
    }

    fn collect_scope(&mut self, syntax: &'a parse::AllocScope, level: LevelId, ctx: Context) {
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
        if let Some((span, _)) = attrs.disjoint {
            // Ignored, it would read as a claim that covers the scope's
            // nodes, and check nothing.
            self.diag.error_at(
                span,
                crate::diag::with_help(
                    "`#[disjoint]` does not apply to an alloc scope",
                    "put it on the nodes inside the scope that touch disjoint parts, or on the repeated block around it",
                ),
            );
        }
        let id = self.model.scopes.len();
        let buffer_name = syntax.buffer.to_string();
        let make = |op: Op<'a>, origin, name: String| {
            region_node(&syntax.buffer, name, op, origin, level, ctx)
        };
        let alloc = self.push_node(make(
            Op::Alloc {
                buffer: &syntax.buffer,
                ty: &syntax.ty,
                len: &syntax.len,
            },
            Origin::ScopeAlloc(id),
            buffer_name.clone(),
        ));
        self.register_label(&syntax.buffer, LabelTarget::Scope(id));
        self.model.scopes.push(Scope {
            syntax,
            level,
            parent: ctx.scope,
            region: ctx.region,
            alloc,
            free: usize::MAX,
            buffer: self.model.buffers.len(),
        });
        self.add_buffer(&syntax.buffer, alloc, Some(id), false);
        let inner = Context {
            scope: Some(id),
            region: Some(Region::Scope(id)),
            ..ctx
        };
        self.collect(&syntax.body, level, inner);
        let free = self.push_node(make(
            Op::Free {
                buffer: &syntax.buffer,
            },
            Origin::ScopeFree(id),
            format!("{buffer_name}.free"),
        ));
        let buffer = self.model.scopes[id].buffer;
        self.model.nodes[free].buffer = Some(buffer);
        self.model.buffers[buffer].frees.push(free);
        self.model.scopes[id].free = free;
    }
}

/// A node a region makes for itself in `ctx`: an alloc scope's alloc and
/// free nodes, a repeated block's or a placement's start and end.
pub(super) fn region_node<'a>(
    label: &Ident,
    name: String,
    op: Op<'a>,
    origin: Origin<'a>,
    level: LevelId,
    ctx: Context,
) -> Node<'a> {
    Node {
        label: label.clone(),
        stem: label.to_string(),
        name,
        placed: ctx.place,
        op,
        origin,
        level,
        scope: ctx.scope,
        repeat: ctx.repeat,
        region: ctx.region,
        attrs: NodeAttrs::default(),
        uses: Vec::new(),
        config_uses: Vec::new(),
        bound: Vec::new(),
        handle: None,
        bodies: Vec::new(),
        buffer: None,
    }
}

/// A raw identifier as a label or a handle's name: refused. Those of
/// other names were made plain at parsing (see `parse::plain`), so this
/// is a keyword's (`r#type`), and generated names are made from labels.
/// Returns whether it refused the name.
fn refuse_raw(name: &Ident, diag: &Diagnostics) -> bool {
    let text = name.to_string();
    let Some(plain) = text.strip_prefix("r#") else {
        return false;
    };
    diag.error_with_help(
        name,
        format!("`{text}` is a raw identifier, which cannot name a node, a block or a handle"),
        format!("`{plain}` is a Rust keyword: give it another name (`{plain}_`, say)"),
    );
    true
}
