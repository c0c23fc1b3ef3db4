//! Graph memory: every use of an allocation is ordered after its alloc node
//! and before its free node, scoped buffers are named only inside their
//! scope, and every allocation is freed, escapes, or is auto-freed.
//!
//! `after_alloc[v]` holds bit b when v is the alloc node of buffer b or
//! reachable from it; `before_free[v]` when v is b's free node or reaches it.
//! Both are propagated along the top graph's topological order.

use super::bits::BitMatrix;
use super::{top_level_node, Topology};
use crate::diag::Diagnostics;
use crate::model::{BufferId, Model, NodeId, Op, Origin, ScopeId, TOP};
use rustc_hash::FxHashMap;

/// Every rule; with `ordering` false (an edge was dropped), only those
/// that do not depend on the edges.
pub fn check(model: &Model<'_>, topology: &Topology, ordering: bool, diag: &Diagnostics) {
    check_freed(model, diag);
    let repeated_uses = check_repeated(model, diag);
    if !ordering {
        return;
    }
    let names: FxHashMap<String, BufferId> = model
        .buffers
        .iter()
        .enumerate()
        .map(|(id, b)| (b.name.to_string(), id))
        .collect();
    if names.is_empty() {
        return;
    }
    let Some(order) = topology.orders.get(TOP).and_then(Option::as_ref) else {
        return; // a cycle was reported; ordering is meaningless
    };
    let n = model.nodes.len();
    let buffers = model.buffers.len();
    let mut after_alloc = BitMatrix::new(n, buffers);
    let mut before_free = BitMatrix::new(n, buffers);
    for (id, buffer) in model.buffers.iter().enumerate() {
        after_alloc.set(buffer.alloc, id);
        if let Some(&free) = buffer.frees.first() {
            before_free.set(free, id);
        }
    }
    for &v in order {
        for &p in &topology.predecessors[v] {
            after_alloc.union_into(v, p);
        }
    }
    for &v in order.iter().rev() {
        for &s in &topology.successors[v] {
            before_free.union_into(v, s);
        }
    }
    // A free not ordered after its alloc is the one error of its buffer's
    // free ordering (its uses are then unordered with it too).
    let misplaced_frees = check_free_after_alloc(model, topology, &after_alloc, diag);
    // Report each (buffer, node) pair once, however often the node names it.
    let mut reported: FxHashMap<(BufferId, NodeId), ()> = FxHashMap::default();
    for (id, node) in model.nodes.iter().enumerate() {
        for ident in &node.uses {
            let Some(&buffer_id) = names.get(&ident.to_string()) else {
                continue;
            };
            if reported.contains_key(&(buffer_id, id)) || repeated_uses.contains(&(buffer_id, id)) {
                continue;
            }
            let buffer = &model.buffers[buffer_id];
            if let Some(scope) = buffer.scope {
                if !in_scope(model, id, scope) {
                    reported.insert((buffer_id, id), ());
                    diag.error_with_help(
                        ident,
                        format!("`{ident}` is used by `{}` outside its alloc scope", node.name),
                        format!("`{ident}` exists only inside `alloc {ident}: ... {{ ... }}`; move `{}` into the scope's body", node.name),
                    );
                    continue;
                }
            }
            if model.nodes[buffer.alloc].level != TOP {
                continue; // reported: graph memory inside a conditional body
            }
            let user = top_level_node(model, id);
            let through = if user == id {
                String::new()
            } else {
                format!(", whose body holds `{}`,", node.name)
            };
            let alloc_name = &model.nodes[buffer.alloc].name;
            let user_name = &model.nodes[user].name;
            if user != buffer.alloc && !after_alloc.get(user, buffer_id) {
                reported.insert((buffer_id, id), ());
                diag.error_with_help(
                    ident,
                    format!(
                        "`{ident}` is used by `{}` before it is allocated: `{user_name}`{through} is not ordered after the alloc node `{alloc_name}`",
                        node.name
                    ),
                    if reaches(topology, user, buffer.alloc) {
                        format!("`{user_name}` runs before `{alloc_name}` (the edges order them that way): reverse the edges between them so that `{alloc_name}` comes first")
                    } else {
                        format!("add an edge {alloc_name} -> {user_name} so that `{ident}` is allocated before its first use")
                    },
                );
                continue;
            }
            let Some(&free) = buffer.frees.first() else {
                continue;
            };
            if model.nodes[free].level != TOP || misplaced_frees.contains(&buffer_id) {
                continue;
            }
            let free_name = &model.nodes[free].name;
            if user != free && !before_free.get(user, buffer_id) {
                reported.insert((buffer_id, id), ());
                diag.error_with_help(
                    ident,
                    format!(
                        "`{ident}` is used by `{}` after it may be freed: `{user_name}`{through} is not ordered before the free node `{free_name}`",
                        node.name
                    ),
                    if reaches(topology, free, user) {
                        format!("`{user_name}` runs after `{free_name}` (the edges order them that way): order `{user_name}` before the free instead, as in {user_name} -> {free_name}")
                    } else {
                        format!("add an edge {user_name} -> {free_name} so that {free_name} frees {ident} after its last use")
                    },
                );
            }
        }
    }
}

/// An allocation in a repeated block is made once per iteration: it
/// cannot escape, its free is in the same block (not in a nested one, not
/// outside), and its users are inside the block. Returns the (buffer,
/// node) uses reported.
fn check_repeated(model: &Model<'_>, diag: &Diagnostics) -> Vec<(BufferId, NodeId)> {
    let mut reported = Vec::new();
    for (id, buffer) in model.buffers.iter().enumerate() {
        let chain = model.repeat_chain(buffer.alloc);
        let name = &buffer.name;
        if let (Some(&block), true) = (chain.first(), buffer.escape) {
            let block = &model.repeats[block].syntax.label;
            diag.error_with_help(
                name,
                format!("`{name}` is allocated in every iteration of `{block}` and cannot escape"),
                "an escaping allocation is handed to the caller once: allocate it outside the repeated block",
            );
        }
        for &free in &buffer.frees {
            let free_chain = model.repeat_chain(free);
            if free_chain != chain {
                let free_name = &model.nodes[free].name;
                let (message, help) = match (chain.first(), free_chain.first()) {
                    (Some(&r), _) if !free_chain.contains(&r) => {
                        let block = &model.repeats[r].syntax.label;
                        (format!("`{free_name}` frees `{name}`, which is allocated in every iteration of `{block}`, outside that block"),
                         format!("free it inside `{block}`, in the iteration that allocated it"))
                    }
                    (_, Some(&r)) => {
                        let block = &model.repeats[r].syntax.label;
                        (format!("`{free_name}` would free `{name}` in every iteration of `{block}`, but it is allocated once"),
                         format!("free it where it is allocated: outside `{block}`, after it"))
                    }
                    _ => continue,
                };
                let Op::Free { buffer: ident } = model.nodes[free].op else {
                    continue;
                };
                diag.error_with_help(ident, message, help);
            }
        }
        let Some(&block) = chain.first() else {
            continue;
        };
        for (user, node) in model.nodes.iter().enumerate() {
            let Some(ident) = node.uses.iter().find(|i| *i == name) else {
                continue;
            };
            if model.buffer_named(&name.to_string()) != Some(id)
                || model.is_repeated_by(user, block)
            {
                continue;
            }
            reported.push((id, user));
            let block = &model.repeats[block].syntax.label;
            diag.error_with_help(
                ident,
                format!("`{name}` is allocated in every iteration of `{block}`, but `{}` uses it outside that block", node.name),
                format!("each iteration's `{name}` exists only in that iteration: move `{}` into `{block}`, or allocate `{name}` outside it", node.name),
            );
        }
    }
    reported
}

/// Whether `node` (or the conditional node holding it) is inside `scope`.
fn in_scope(model: &Model<'_>, node: NodeId, scope: ScopeId) -> bool {
    let mut current = model.nodes[node].scope;
    let mut holder = node;
    loop {
        while let Some(s) = current {
            if s == scope {
                return true;
            }
            current = model.scopes[s].parent;
        }
        // Leave a conditional body and look at the scope of its node.
        let level = model.nodes[holder].level;
        match model.levels[level].parent {
            Some(parent) => {
                holder = parent;
                current = model.nodes[parent].scope;
            }
            None => return false,
        }
    }
}

fn check_freed(model: &Model<'_>, diag: &Diagnostics) {
    if model.attrs.auto_free_on_launch.is_some() {
        return;
    }
    for buffer in &model.buffers {
        if buffer.frees.is_empty() && !buffer.escape && buffer.scope.is_none() {
            let name = &buffer.name;
            diag.error_with_help(
                name,
                format!("graph allocation `{name}` is never freed"),
                format!(
                    "add a free node ordered after its last use (`done: free {name};`), \
                     mark it `#[escape]` to hand it to the caller, \
                     or put `#[auto_free_on_launch]` on the graph"
                ),
            );
        }
    }
}

/// A free node must be ordered after its buffer's alloc node (a free with no
/// path from the alloc, or with the edge written backwards, would free
/// memory before, or while, it is allocated).
fn check_free_after_alloc(
    model: &Model<'_>,
    topology: &Topology,
    after_alloc: &super::bits::BitMatrix,
    diag: &Diagnostics,
) -> Vec<BufferId> {
    let mut misplaced = Vec::new();
    for (id, buffer) in model.buffers.iter().enumerate() {
        let Some(&free) = buffer.frees.first() else {
            continue;
        };
        if model.nodes[free].level != TOP || model.nodes[buffer.alloc].level != TOP {
            continue; // reported: graph memory inside a conditional body
        }
        if after_alloc.get(free, id) {
            continue;
        }
        if matches!(model.nodes[free].origin, Origin::ScopeFree(_)) {
            continue; // a scope's free follows its alloc by construction
        }
        let Op::Free { buffer: ident } = model.nodes[free].op else {
            continue;
        };
        let (free_name, alloc_name) = (&model.nodes[free].name, &model.nodes[buffer.alloc].name);
        let help = if reaches(topology, free, buffer.alloc) {
            format!("the edges order `{free_name}` before `{alloc_name}`: reverse them, as in {alloc_name} -> ... -> {free_name}")
        } else {
            format!(
                "add an edge {alloc_name} -> {free_name} (through the nodes that use `{ident}`)"
            )
        };
        diag.error_with_help(
            ident,
            format!("`{free_name}` frees `{ident}` but is not ordered after its alloc node `{alloc_name}`"),
            help,
        );
        misplaced.push(id);
    }
    misplaced
}

/// Whether a path of edges leads from `from` to `to` (only for errors: a
/// walk over the successors).
fn reaches(topology: &Topology, from: NodeId, to: NodeId) -> bool {
    let mut seen = vec![false; topology.successors.len()];
    let mut stack = vec![from];
    while let Some(v) = stack.pop() {
        if v == to {
            return true;
        }
        if std::mem::replace(&mut seen[v], true) {
            continue;
        }
        stack.extend(topology.successors[v].iter().copied());
    }
    false
}
