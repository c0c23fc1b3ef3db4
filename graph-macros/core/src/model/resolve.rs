//! Lowering, second pass: resolves the names the first pass collected
//! (handles, freed buffers, edge labels), adds the edges alloc scopes imply,
//! and reports what does not resolve.

use super::lower::{LabelTarget, Lowering};
use super::*;
use crate::parse::{EdgeKind, EdgeLabel};
use proc_macro2::TokenStream;
use rustc_hash::{FxHashMap, FxHashSet};
use syn::Ident;

impl<'a> Lowering<'a, '_> {
    pub(super) fn resolve_handles(&mut self) {
        for &(node, ident) in &self.conditionals {
            let level = self.model.nodes[node].level;
            match self.model.visible_handle(&ident.to_string(), level) {
                Some(handle) => {
                    self.model.handles[handle].named = true;
                    if !self.handle_repeats_match(node, handle, ident) {
                        continue;
                    }
                    self.model.nodes[node].handle = Some(handle);
                    self.model.handles[handle].drives.push(node);
                }
                // (A raw keyword cannot name a handle: no declaration to hint.)
                None if ident.to_string().starts_with("r#") => self
                    .diag
                    .error(ident, format!("unknown conditional handle `{ident}`")),
                None => {
                    let name = ident.to_string();
                    let similar = self.similar_handle(&name, level);
                    // A handle of that name out of sight (another body's),
                    // or the one meant, is this error's, not one that
                    // drives nothing.
                    for handle in &mut self.model.handles {
                        let named = handle.syntax.name.to_string();
                        if named == name || similar.as_deref() == Some(named.as_str()) {
                            handle.named = true;
                        }
                    }
                    let help = match similar {
                        Some(similar) => format!(
                            "a conditional handle with a similar name is declared: `{similar}`"
                        ),
                        None => format!(
                            "declare it with `cond {ident};` (or `cond {ident} = 0;` for a \
                             default) in this graph or an enclosing body"
                        ),
                    };
                    self.diag.error_with_help(
                        ident,
                        format!("unknown conditional handle `{ident}`"),
                        help,
                    )
                }
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
                    if let Some(&block) = self.model.repeat_chain(node).first() {
                        let block = &self.model.repeats[block].syntax.label;
                        self.diag.error_with_help(
                            ident,
                            format!("`{}` would free `{name}` in every iteration of `{block}`, but it is one allocation", self.model.nodes[node].name),
                            format!("free it once: outside `{block}`, after it"),
                        );
                        continue;
                    }
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

    /// Resolves a label used in an edge written in `level`, in repeated
    /// block `repeat`: its target and how many iterations back it names.
    /// Reports an unknown label, one from another conditional body or
    /// repeated block, and a misplaced index.
    fn resolve_label(
        &self,
        label: &EdgeLabel,
        level: LevelId,
        repeat: Option<RepeatId>,
        prefix: &str,
        ends: (bool, bool),
    ) -> Option<(LabelTarget, usize)> {
        let ident = &label.label;
        let name = ident.to_string();
        let Some(&target) = self.labels.get(&format!("{prefix}{name}")) else {
            if !prefix.is_empty() && self.labels.contains_key(&name) {
                let placement = prefix.trim_end_matches('.');
                self.diag.error_with_help(
                    ident,
                    format!("`{name}` is outside the fragment placed as `{placement}`: an edge in a fragment joins its own nodes"),
                    format!("order the placement itself where it is placed (as in `{placement} -> {name}`)"),
                );
                return None;
            }
            self.report_unknown_label(ident, level);
            return None;
        };
        let node = &self.model.nodes[self.source_of(target)];
        if node.level != level {
            let (message, help) = self.crossing_message(&name, level, node.level);
            self.diag.error_with_help(ident, message, help);
            return None;
        }
        if node.repeat != repeat {
            self.report_repeat_crossing(label, node.repeat, repeat, ends);
            return None;
        }
        let back = match &label.index {
            None => 0,
            Some(index) => self.index_back(label, index, repeat)?,
        };
        Some((target, back))
    }

    /// The node an edge leaves from when it names `target` as its source.
    fn source_of(&self, target: LabelTarget) -> NodeId {
        match target {
            LabelTarget::Node(id) => id,
            LabelTarget::Scope(scope) => self.model.scopes[scope].free,
            LabelTarget::Repeat(repeat) => self.model.repeats[repeat].end,
            LabelTarget::Place(place) => self.model.places[place].end,
        }
    }

    /// The node an edge enters when it names `target` as its target.
    fn target_of(&self, target: LabelTarget) -> NodeId {
        match target {
            LabelTarget::Node(id) => id,
            LabelTarget::Scope(scope) => self.model.scopes[scope].alloc,
            LabelTarget::Repeat(repeat) => self.model.repeats[repeat].start,
            LabelTarget::Place(place) => self.model.places[place].start,
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
        most_similar(name, self.labels.keys().map(String::as_str))
    }

    /// A handle visible at `level` (declared there or in an enclosing
    /// level) whose name is close to `name`.
    fn similar_handle(&self, name: &str, level: LevelId) -> Option<String> {
        let visible = self
            .model
            .handles
            .iter()
            .filter(|handle| handle.level == level || self.is_inside(level, handle.level));
        let names: Vec<String> = visible.map(|h| h.syntax.name.to_string()).collect();
        most_similar(name, names.iter().map(String::as_str)).map(str::to_string)
    }

    pub(super) fn resolve_edges(&mut self) {
        let mut seen: FxHashMap<(NodeId, NodeId, usize), EdgeKind> = FxHashMap::default();
        let mut dropped = false;
        for (stmt, level, repeat, prefix) in &self.edge_stmts {
            let (stmt, level, repeat) = (*stmt, *level, *repeat);
            let groups = stmt.groups.len();
            // A label that failed once in this statement is reported once
            // (`b -> b` in a block named `b` is one mistake).
            let mut failed: Vec<&Ident> = Vec::new();
            let resolved: Vec<Vec<(LabelTarget, usize, &EdgeLabel)>> = stmt
                .groups
                .iter()
                .enumerate()
                .map(|(g, group)| {
                    // Which ends of edges this group's labels are: sources
                    // (all but the last group), targets (all but the first).
                    let ends = (g + 1 < groups, g > 0);
                    group
                        .labels
                        .iter()
                        .filter_map(|label| {
                            if failed.contains(&&label.label) {
                                return None;
                            }
                            let resolved = self.resolve_label(label, level, repeat, prefix, ends);
                            if resolved.is_none() {
                                dropped = true;
                                failed.push(&label.label);
                            }
                            let (target, back) = resolved?;
                            Some((target, back, label))
                        })
                        .collect()
                })
                .collect();
            for (i, link) in stmt.links.iter().enumerate() {
                for &(from_target, from_back, from_label) in &resolved[i] {
                    let from = self.source_of(from_target);
                    for &(to_target, to_back, to_label) in &resolved[i + 1] {
                        let to = self.target_of(to_target);
                        let tokens = edge_tokens(from_label, &link.tokens, to_label);
                        let (a, b) = (&from_label.label, &to_label.label);
                        if to_back > from_back {
                            self.diag.error_with_help(
                                tokens,
                                format!(
                                    "`{} -> {}` points back to an earlier iteration: in every iteration it would run `{b}` of an earlier iteration after `{a}` of a later one, and a block whose body orders `{b}` before `{a}` would cycle",
                                    from_label.text(),
                                    to_label.text()
                                ),
                                format!(
                                    "an edge between iterations goes forward, from the earlier iteration: write it `{a}[{var}-1] -> {b}`",
                                    var = from_label.index.as_ref().or(to_label.index.as_ref()).map_or_else(|| "i".to_string(), |ix| ix.var.to_string())
                                ),
                            );
                            continue;
                        }
                        let back = from_back - to_back;
                        if a == b && back == 0 {
                            self.diag.error_with_help(
                                tokens,
                                format!("self-edge: `{a} -> {b}` makes `{a}` depend on itself"),
                                match repeat {
                                    Some(_) => "remove this edge (`a[i-1] -> a` orders each iteration after the one before)",
                                    None => "remove this edge",
                                },
                            );
                            continue;
                        }
                        if let Some(earlier) = seen.insert((from, to, back), link.kind) {
                            // One edge has one kind: a second statement
                            // does not change the first's.
                            let help = if earlier == link.kind {
                                "this dependency is already declared; remove one of them"
                                    .to_string()
                            } else {
                                format!(
                                    "an edge has one kind, and `{a} -> {b}` is already declared {}: give that statement this kind (`{a} {} {b}`) and remove this one",
                                    kind_name(earlier),
                                    arrow(link.kind)
                                )
                            };
                            self.diag.error_with_help(
                                tokens,
                                format!(
                                    "duplicate edge `{} -> {}`",
                                    from_label.text(),
                                    to_label.text()
                                ),
                                help,
                            );
                            continue;
                        }
                        match repeat.filter(|_| back > 0) {
                            Some(r) => self.model.repeats[r].carried.push(Carried {
                                from,
                                to,
                                back,
                                kind: link.kind,
                                tokens,
                                kind_span: link.span,
                            }),
                            None => self.model.levels[level].edges.push(Edge {
                                from,
                                to,
                                kind: link.kind,
                                tokens: Some(tokens),
                                kind_span: Some(link.span),
                            }),
                        }
                    }
                }
            }
        }
        self.model.dropped_edges = dropped;
    }

    /// The region `g`'s entry and exit nodes.
    fn region_ends(&self, g: Region) -> (NodeId, NodeId) {
        match g {
            Region::Scope(s) => (self.model.scopes[s].alloc, self.model.scopes[s].free),
            Region::Repeat(r) => (self.model.repeats[r].start, self.model.repeats[r].end),
            Region::Place(p) => (self.model.places[p].start, self.model.places[p].end),
        }
    }

    fn region_parent(&self, g: Region) -> Option<Region> {
        match g {
            Region::Scope(s) => self.model.scopes[s].region,
            Region::Repeat(r) => self.model.repeats[r].region,
            Region::Place(p) => self.model.places[p].region,
        }
    }

    /// Adds the edges regions (alloc scopes, repeated blocks) imply: the
    /// region's entry (alloc node, start) before every source of its body,
    /// every sink of its body before its exit (free node, end).
    pub(super) fn add_scope_edges(&mut self) {
        let regions: Vec<Region> = (0..self.model.scopes.len())
            .map(Region::Scope)
            .chain((0..self.model.repeats.len()).map(Region::Repeat))
            .chain((0..self.model.places.len()).map(Region::Place))
            .collect();
        if regions.is_empty() {
            return;
        }
        // has_pred[n] / has_succ[n]: whether the body member `n` of its
        // region has an edge from / to another member of the same region.
        let mut has_pred = vec![false; self.model.nodes.len()];
        let mut has_succ = vec![false; self.model.nodes.len()];
        for level in &self.model.levels {
            for edge in &level.edges {
                if let Some((from_member, to_member)) =
                    self.members_in_common_region(edge.from, edge.to)
                {
                    has_succ[from_member] = true;
                    has_pred[to_member] = true;
                }
            }
        }
        let mut implied: Vec<(LevelId, NodeId, NodeId)> = Vec::new();
        // Direct members of each region, in source order: its nodes, and
        // nested regions (represented by their entry node).
        let mut members: FxHashMap<Region, Vec<NodeId>> = FxHashMap::default();
        for (id, node) in self.model.nodes.iter().enumerate() {
            let Some(region) = node.region else { continue };
            match node.origin {
                Origin::ScopeFree(_) | Origin::RepeatEnd(_) | Origin::PlaceEnd(_) => {}
                _ => members.entry(region).or_default().push(id),
            }
        }
        for g in regions {
            let (entry, exit) = self.region_ends(g);
            let level = self.model.nodes[entry].level;
            let Some(members) = members.get(&g) else {
                implied.push((level, entry, exit));
                continue;
            };
            for &member in members {
                // A nested region is entered at its entry node and left at its exit.
                let (member_entry, member_exit) = match self.model.nodes[member].origin {
                    Origin::ScopeAlloc(inner) => self.region_ends(Region::Scope(inner)),
                    Origin::RepeatStart(inner) => self.region_ends(Region::Repeat(inner)),
                    Origin::PlaceStart(inner) => self.region_ends(Region::Place(inner)),
                    _ => (member, member),
                };
                if !has_pred[member] {
                    implied.push((level, entry, member_entry));
                }
                if !has_succ[member] {
                    implied.push((level, member_exit, exit));
                }
            }
        }
        // The levels' edges as a set: a scan of the edge list per implied
        // edge was quadratic (a tenth of the macro's time at 10,000 nodes).
        let mut present: FxHashMap<LevelId, FxHashSet<(NodeId, NodeId)>> = FxHashMap::default();
        for (level, from, to) in implied {
            let edges = &mut self.model.levels[level].edges;
            let present = present
                .entry(level)
                .or_insert_with(|| edges.iter().map(|e| (e.from, e.to)).collect());
            if present.insert((from, to)) {
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
    /// children, a nested region standing as its entry node) of the
    /// innermost region holding both, if any.
    fn members_in_common_region(&self, from: NodeId, to: NodeId) -> Option<(NodeId, NodeId)> {
        let chain = |node: NodeId| {
            // (region, member of that region holding `node`), innermost first.
            let mut out = Vec::new();
            let mut member = node;
            // A region's exit stands for the region like its entry.
            match self.model.nodes[node].origin {
                Origin::ScopeFree(s) => member = self.model.scopes[s].alloc,
                Origin::RepeatEnd(r) => member = self.model.repeats[r].start,
                Origin::PlaceEnd(p) => member = self.model.places[p].start,
                _ => {}
            }
            let mut region = self.model.nodes[node].region;
            while let Some(g) = region {
                out.push((g, member));
                member = self.region_ends(g).0;
                region = self.region_parent(g);
            }
            out
        };
        let from_chain = chain(from);
        let to_chain = chain(to);
        for &(region, to_member) in &to_chain {
            if let Some(&(_, from_member)) = from_chain.iter().find(|(g, _)| *g == region) {
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
fn edge_tokens(from: &EdgeLabel, arrow: &TokenStream, to: &EdgeLabel) -> TokenStream {
    let mut tokens = from.tokens();
    tokens.extend(arrow.clone());
    tokens.extend(to.tokens());
    tokens
}

/// Whether a parameter's type is `Escaped<T>` (an allocation another
/// graph's launch made, which this graph may free).
fn is_escaped_type(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(path) if path.path.segments.last().is_some_and(|s| s.ident == "Escaped"))
}

/// The candidate closest to `name`, if one is close enough to be a slip.
pub(super) fn most_similar<'c>(
    name: &str,
    candidates: impl Iterator<Item = &'c str>,
) -> Option<&'c str> {
    candidates
        .map(|candidate| (strsim::jaro_winkler(name, candidate), candidate))
        // Jaro-Winkler misses one-letter slips in short names (`abd` for
        // `abc` scores 0.82): one edit is close enough there.
        .filter(|(score, candidate)| {
            *score > 0.85 || (name.len() >= 2 && strsim::damerau_levenshtein(name, candidate) <= 1)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))
        .map(|(_, candidate)| candidate)
}

/// How a message calls an edge kind.
fn kind_name(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Full => "as a plain edge",
        EdgeKind::Programmatic => "programmatic",
        EdgeKind::LaunchOrder => "launch-order",
    }
}

/// An edge kind's arrow.
fn arrow(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Full => "->",
        EdgeKind::Programmatic => "-(programmatic)->",
        EdgeKind::LaunchOrder => "-(launch_order)->",
    }
}
