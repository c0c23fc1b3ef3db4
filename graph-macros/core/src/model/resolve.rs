//! Lowering, second pass: resolves the names the first pass collected
//! (handles, freed buffers, edge labels), adds the edges alloc scopes imply,
//! and reports what does not resolve.

use super::lower::{LabelTarget, Lowering};
use super::*;
use proc_macro2::TokenStream;
use quote::ToTokens;
use std::collections::HashMap;
use syn::Ident;

impl<'a> Lowering<'a, '_> {
    pub(super) fn resolve_handles(&mut self) {
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

    pub(super) fn resolve_buffers(&mut self) {
        let mut freed_params: Vec<(String, NodeId)> = Vec::new();
        for &(node, ident) in &self.frees {
            let name = ident.to_string();
            let Some(buffer) = self.model.buffer_named(&name) else {
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

    pub(super) fn resolve_edges(&mut self) {
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
    pub(super) fn add_scope_edges(&mut self) {
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

/// Whether a parameter's type is `Escaped<T>` (an allocation another
/// graph's launch made, which this graph may free).
fn is_escaped_type(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(path) if path.path.segments.last().is_some_and(|s| s.ident == "Escaped"))
}
