//! Conditional nodes: one conditional node per handle (no more, no
//! fewer), a handle without a
//! default is set upstream before it is read, a `while` body can stop its
//! loop, and `switch` arms are exactly 0..n.
//!
//! `sets[v]` holds the handles node v may set (a kernel taking the handle,
//! or any node inside v's bodies); `upstream[v]` the handles set by some
//! strict ancestor of v in its level, propagated along topological orders.

use super::bits::BitMatrix;
use super::Topology;
use crate::diag::Diagnostics;
use crate::model::{HandleId, Kind, Model, NodeId, Op, RepeatId};

/// Every rule; with `ordering` false (an edge was dropped), only those
/// that do not depend on the edges.
pub fn check(model: &Model<'_>, topology: &Topology, ordering: bool, diag: &Diagnostics) {
    check_one_node_per_handle(model, diag);
    check_switch_arms(model, diag);
    if model.handles.is_empty() {
        return;
    }
    let sets = handles_set_within(model);
    check_while_can_stop(model, &sets, diag);
    if ordering {
        let direct = handles_set_directly(model);
        check_set_before_read(model, topology, &direct, diag);
        check_setters_ordered(model, topology, diag);
        check_setters_ordered_with_reader(model, topology, diag);
    }
}

/// Two kernels that set one handle must be ordered: CUDA leaves concurrent
/// `cudaGraphSetConditional` calls on one handle undefined. Setters in
/// different arms of one conditional node never run in the same launch.
///
/// Lifted to each level (a node inside a conditional body counts as the
/// conditional node there), the nodes that hold setters of one handle must
/// form a chain: sorted in the level's topological order, each reaches the
/// next. So each consecutive pair costs one search of the level.
fn check_setters_ordered(model: &Model<'_>, topology: &Topology, diag: &Diagnostics) {
    let mut holders: Vec<Vec<(usize, NodeId, NodeId)>> = vec![Vec::new(); model.handles.len()];
    for setter in 0..model.nodes.len() {
        for handle in model.handles_set_by(setter) {
            // (level, node there, the setter), for the setter and every
            // conditional node holding it.
            let mut at = setter;
            loop {
                let level = model.nodes[at].level;
                holders[handle].push((level, at, setter));
                match model.levels[level].parent {
                    Some(parent) => at = parent,
                    None => break,
                }
            }
        }
    }
    let position = positions(model, topology);
    let mut reported: Vec<NodeId> = Vec::new();
    for (handle, mut entries) in holders.into_iter().enumerate() {
        entries.sort_by_key(|&(level, node, _)| (level, position[node], node));
        entries.dedup_by_key(|&mut (level, node, _)| (level, node));
        for pair in entries.windows(2) {
            let ((level, first, a), (other, second, b)) = (pair[0], pair[1]);
            if level != other || topology.orders[level].is_none() {
                continue;
            }
            if reaches_before(topology, &position, first, second) || reported.contains(&b) {
                continue;
            }
            reported.push(b);
            let name = &model.handles[handle].syntax.name;
            let Some(ident) = model.nodes[b].uses.iter().find(|i| *i == name) else {
                continue;
            };
            let (x, y) = (&model.nodes[first].name, &model.nodes[second].name);
            diag.error_with_help(
                ident,
                format!(
                    "`{}` and `{}` both set the conditional handle `{name}` and may run at the same time",
                    model.nodes[a].name, model.nodes[b].name
                ),
                format!("order them with an edge (`{x} -> {y}` or `{y} -> {x}`, the one that sets it last wins): CUDA leaves concurrent sets of one handle undefined"),
            );
        }
    }
}

/// A kernel that sets a handle while its conditional node reads it races
/// with that read: each setter must be ordered before the conditional
/// node, after it, or be inside its bodies (as a `while` body's is).
/// Compared at the innermost level both are in (a node inside a
/// conditional body counts as the conditional node there); there, one node
/// holding both (the reader itself, or one whose arms part them) is fine.
fn check_setters_ordered_with_reader(model: &Model<'_>, topology: &Topology, diag: &Diagnostics) {
    // A node and the conditional nodes holding it, innermost first, each
    // with its level.
    let chain = |at: NodeId| model.holders(at).map(|n| (model.nodes[n].level, n));
    // Where each handle's setters are, lifted to every level: a reader
    // that holds a setter there is that setter, whose pairs
    // `check_setters_ordered` reports (one report for one missing edge).
    let mut lifted: Vec<rustc_hash::FxHashSet<(usize, NodeId)>> =
        vec![Default::default(); model.handles.len()];
    for setter in 0..model.nodes.len() {
        for handle in model.handles_set_by(setter) {
            lifted[handle].extend(chain(setter));
        }
    }
    if lifted.iter().all(|l| l.is_empty()) {
        return;
    }
    let position = positions(model, topology);
    for setter in 0..model.nodes.len() {
        for handle in model.handles_set_by(setter) {
            let Some(&reader) = model.handles[handle].drives.first() else {
                continue;
            };
            let readers: Vec<_> = chain(reader).collect();
            let common = chain(setter).find_map(|(level, mine)| {
                let theirs = readers.iter().find(|(l, _)| *l == level)?.1;
                Some((level, mine, theirs))
            });
            let Some((level, mine, theirs)) = common else {
                continue;
            };
            if mine == theirs
                || lifted[handle].contains(&(level, theirs))
                || topology.orders[level].is_none()
                || reaches_before(topology, &position, mine, theirs)
                || reaches_before(topology, &position, theirs, mine)
            {
                continue;
            }
            let name = &model.handles[handle].syntax.name;
            let Some(ident) = model.nodes[setter].uses.iter().find(|i| *i == name) else {
                continue;
            };
            let (a, b) = (&model.nodes[mine].name, &model.nodes[theirs].name);
            diag.error_with_help(
                ident,
                format!(
                    "`{}` sets the conditional handle `{name}` while `{}` may be reading it: nothing orders them",
                    model.nodes[setter].name, model.nodes[reader].name
                ),
                format!("order them with an edge: `{a} -> {b}` to set it for this launch's `{b}`, or `{b} -> {a}` to set it after"),
            );
        }
    }
}

/// Each node's place in its level's topological order.
fn positions(model: &Model<'_>, topology: &Topology) -> Vec<usize> {
    let mut position = vec![0usize; model.nodes.len()];
    for order in topology.orders.iter().flatten() {
        for (i, &v) in order.iter().enumerate() {
            position[v] = i;
        }
    }
    position
}

/// Whether `to` is reachable from `from` along edges of their level,
/// searching only the nodes between them in the level's topological order
/// (a path cannot leave that stretch): near the setter, the search is
/// short.
fn reaches_before(topology: &Topology, position: &[usize], from: NodeId, to: NodeId) -> bool {
    if position[from] > position[to] {
        return false;
    }
    let mut stack = vec![from];
    let mut seen = rustc_hash::FxHashSet::default();
    while let Some(v) = stack.pop() {
        if v == to {
            return true;
        }
        if position[v] < position[to] && seen.insert(v) {
            stack.extend(&topology.successors[v]);
        }
    }
    false
}

fn check_one_node_per_handle(model: &Model<'_>, diag: &Diagnostics) {
    for handle in &model.handles {
        let Some((&first, rest)) = handle.drives.split_first() else {
            if handle.named {
                continue;
            }
            // CUDA: a handle "must be associated with a conditional node in
            // this graph", and one that is not may fail the instantiation.
            let name = &handle.syntax.name;
            diag.error_with_help(
                name,
                format!("the conditional handle `{name}` drives no conditional node"),
                format!("CUDA requires each handle to drive one: use it in `if {name} {{ .. }}`, `while {name} {{ .. }}` or `switch {name} {{ .. }}`, or remove it (and the kernels that set it)"),
            );
            continue;
        };
        for &node in rest {
            let name = &handle.syntax.name;
            if let Some(ident) = handle_ident(model, node) {
                diag.error_with_help(
                    ident,
                    format!(
                        "the conditional handle `{name}` already drives `{}`",
                        model.nodes[first].name
                    ),
                    format!("each conditional node needs its own handle: declare another with `cond {name}2;`"),
                );
            }
        }
    }
}

/// The handle identifier as written in a conditional node.
fn handle_ident<'a>(model: &Model<'a>, node: NodeId) -> Option<&'a syn::Ident> {
    model.nodes[node].op.handle()
}

fn check_switch_arms(model: &Model<'_>, diag: &Diagnostics) {
    for node in &model.nodes {
        let Op::Switch { keyword, arms, .. } = node.op else {
            continue;
        };
        if arms.is_empty() {
            diag.error_with_help(
                keyword,
                "a `switch` needs at least one arm",
                "write arms `0 => { ... } 1 => { ... }`",
            );
        }
        for (index, arm) in arms.iter().enumerate() {
            let value = arm.value.base10_parse::<u64>();
            let repeated = value.as_ref().ok().and_then(|v| {
                arms[..index]
                    .iter()
                    .position(|earlier| earlier.value.base10_parse::<u64>().ok() == Some(*v))
            });
            if let Some(first) = repeated {
                diag.error_with_help(
                    &arm.value,
                    format!("switch arm `{}` is written twice", arm.value),
                    format!(
                        "arm {first} is already `{}`; number the arms 0, 1, 2, ... in order, each once",
                        arm.value
                    ),
                );
            } else if value.as_ref().ok() != Some(&(index as u64)) {
                diag.error_with_help(
                    &arm.value,
                    format!(
                        "switch arms must be exactly 0..{}: expected arm `{index}` here",
                        arms.len()
                    ),
                    "number the arms 0, 1, 2, ... in order, with no gaps or repeats",
                );
            }
        }
    }
}

/// The handles each node itself sets, for "set before it is read": a
/// setter in a conditional body (which may not run) or in a repeated
/// block the handle is declared outside (which may run 0 times) is not
/// relied on outside it.
fn handles_set_directly(model: &Model<'_>) -> BitMatrix {
    let mut sets = BitMatrix::new(model.nodes.len(), model.handles.len());
    for id in 0..model.nodes.len() {
        for handle in model.handles_set_by(id) {
            if block_outside_declaration(model, id, handle).is_none() {
                sets.set(id, handle);
            }
        }
    }
    sets
}

/// The repeated block holding `node` that `handle` is declared outside
/// (which may run 0 times, so a set there is not relied on outside it).
fn block_outside_declaration(
    model: &Model<'_>,
    node: NodeId,
    handle: HandleId,
) -> Option<RepeatId> {
    if model.repeats.is_empty() {
        return None;
    }
    let declared = &model.handles[handle].repeats;
    model
        .repeat_chain(node)
        .into_iter()
        .find(|r| !declared.contains(r))
}

/// `sets[v]`: handles that v, or a node in one of v's bodies, sets (as
/// `handles_set_directly`). Bodies come after their conditional node in
/// id order, so one reverse pass folds every body into its parent.
fn handles_set_within(model: &Model<'_>) -> BitMatrix {
    let mut sets = handles_set_directly(model);
    for id in (0..model.nodes.len()).rev() {
        if let Some(parent) = model.levels[model.nodes[id].level].parent {
            sets.union_into(parent, id);
        }
    }
    sets
}

/// Where the setters of `handle` are, if all may not run: "the repeated
/// block `b`, which may run 0 times" or "the body of `c`, which may not run".
fn set_only_in(model: &Model<'_>, handle: crate::model::HandleId) -> Option<String> {
    (0..model.nodes.len()).find_map(|node| {
        if !model.handles_set_by(node).any(|h| h == handle) {
            return None;
        }
        if let Some(block) = block_outside_declaration(model, node, handle) {
            let label = &model.repeats[block].syntax.label;
            return Some(format!(
                "the repeated block `{label}`, which may run 0 times"
            ));
        }
        let holder = model.levels[model.nodes[node].level].parent?;
        Some(format!(
            "the body of `{}`, which may not run",
            model.nodes[holder].name
        ))
    })
}

fn check_while_can_stop(model: &Model<'_>, sets: &BitMatrix, diag: &Diagnostics) {
    for (id, node) in model.nodes.iter().enumerate() {
        if node.kind() != Kind::While {
            continue;
        }
        let Some(handle) = node.handle else { continue };
        let body_sets = node
            .bodies
            .iter()
            .flat_map(|&level| &model.levels[level].nodes)
            .any(|&child| sets.get(child, handle));
        if !body_sets {
            let name = &model.handles[handle].syntax.name;
            let tokens = handle_ident(model, id)
                .map_or_else(|| quote::quote!(#name), |ident| quote::quote!(#ident));
            match block_setting_in_body(model, node, handle) {
                Some(block) => diag.error_with_help(
                    tokens,
                    format!("`while {name}` may never stop: its body sets `{name}` only in the repeated block `{block}`, which may run 0 times"),
                    format!("set `{name}` in the body outside `{block}` too"),
                ),
                None => diag.error_with_help(
                    tokens,
                    format!("`while {name}` can never stop: no kernel or capture in its body takes `{name}`"),
                    format!("pass `{name}` to a kernel in the body that calls cudaGraphSetConditional, or name it in a capture node whose captured kernels do"),
                ),
            }
        }
    }
}

/// The repeated block inside `node`'s bodies that holds a setter of
/// `handle` (one that `handles_set_directly` leaves out), if any.
fn block_setting_in_body<'a>(
    model: &'a Model<'_>,
    node: &crate::model::Node<'_>,
    handle: HandleId,
) -> Option<&'a syn::Ident> {
    (0..model.nodes.len()).find_map(|setter| {
        if !model.handles_set_by(setter).any(|h| h == handle) {
            return None;
        }
        model
            .holders(setter)
            .find(|&at| node.bodies.contains(&model.nodes[at].level))?;
        let block = block_outside_declaration(model, setter, handle)?;
        Some(&model.repeats[block].syntax.label)
    })
}

fn check_set_before_read(
    model: &Model<'_>,
    topology: &Topology,
    sets: &BitMatrix,
    diag: &Diagnostics,
) {
    // upstream[v]: handles set by a strict ancestor of v within its level.
    let mut upstream = BitMatrix::new(model.nodes.len(), model.handles.len());
    for order in topology.orders.iter().flatten() {
        for &v in order {
            for &p in &topology.predecessors[v] {
                upstream.union_into(v, p);
                upstream.union_from(v, sets, p);
            }
        }
    }
    for (id, node) in model.nodes.iter().enumerate() {
        let Some(handle) = node.handle else { continue };
        if model.handles[handle].syntax.default.is_some() {
            continue;
        }
        if topology.orders[node.level].is_none() {
            continue; // a cycle was reported
        }
        if !set_upstream(model, &upstream, id, handle) {
            let name = &model.handles[handle].syntax.name;
            if let (Some(ident), Some(place)) =
                (handle_ident(model, id), set_only_in(model, handle))
            {
                diag.error_with_help(
                    ident,
                    format!(
                        "`{}` reads the conditional handle `{name}`, which has no default and is set only in {place}",
                        node.name
                    ),
                    format!("give it a default (`cond {name} = {};`), or set it upstream outside that too", default_for(node.kind())),
                );
                continue;
            }
            if let Some(ident) = handle_ident(model, id) {
                diag.error_with_help(
                    ident,
                    format!(
                        "`{}` reads the conditional handle `{name}`, which has no default and is not set by any node upstream",
                        node.name
                    ),
                    format!(
                        "give it a default (`cond {name} = {};`) or add an edge from a kernel that takes `{name}` to `{}`",
                        default_for(node.kind()),
                        node.name
                    ),
                );
            }
        }
    }
}

/// Whether some node upstream of `node` (in its level, or upstream of the
/// conditional nodes enclosing it, up to the handle's declaring level) can
/// set `handle`.
fn set_upstream(
    model: &Model<'_>,
    upstream: &BitMatrix,
    mut node: NodeId,
    handle: HandleId,
) -> bool {
    let declared_in = model.handles[handle].level;
    loop {
        if upstream.get(node, handle) {
            return true;
        }
        let level = model.nodes[node].level;
        if level == declared_in {
            return false;
        }
        match model.levels[level].parent {
            Some(parent) => node = parent,
            None => return false,
        }
    }
}

/// The default a hint suggests for a handle driving `op`: 1 for a `while`
/// (0 would never run its body), 0 otherwise.
fn default_for(kind: crate::model::Kind) -> u32 {
    match kind {
        crate::model::Kind::While => 1,
        _ => 0,
    }
}
