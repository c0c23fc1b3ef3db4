//! Races between iterations of a repeated block, reasoned on its body once.
//!
//! Within one iteration, and between the block and the nodes around it, the
//! ordinary checks see the block folded: its body once, its start and end
//! standing for it in the level. What they cannot see is one iteration
//! against another. Edges between iterations (`a[i-k] -> b`) only go
//! forward, so iteration `i`'s member `u` is ordered with iteration `j > i`'s
//! member `v` only by a path `u[i] -> .. -> v[j]`. If every pair of
//! conflicting members (one writes what the other touches) has such a path
//! one iteration apart, `u[i] -> v[i+1]`, then every pair of iterations is
//! ordered (by induction through a writer `w`: `u[i] -> w[i+1] -> .. ->
//! w[j-1] -> v[j]`); if one pair has none, iterations `i` and `i+1` race.
//!
//! A path one iteration apart uses exactly one edge of `back` 1 between
//! iterations of this block, with paths inside one iteration before and
//! after it: `u` reaches the edge's source, and its target reaches `v`. So
//! per block: one search from each such edge (backwards from its source,
//! forwards from its target), then a bit test per conflicting pair.
//!
//! Setters of one conditional handle declared outside the block conflict
//! like writes: CUDA leaves two unordered `cudaGraphSetConditional` calls
//! on one handle undefined.

use super::bits::BitMatrix;
use super::race::{Access, Touch};
use super::{KernelRace, Topology};
use crate::diag::Diagnostics;
use crate::model::{Model, NodeId, Region, RepeatId};
use rustc_hash::FxHashMap;

/// One access seen from a block: the node of the block's level that is
/// or holds (in a conditional body) the accessing node.
struct Member {
    at: NodeId,
}

/// What an access conflicts over: a buffer, or a handle's setters.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Resource {
    Buffer(String),
    Handle(usize),
}

/// One access of a resource under a block.
struct Use {
    member: usize,
    resource: Resource,
    /// How it reports: a touch (its index) or a handle setter (its node).
    source: Source,
}

#[derive(Clone, Copy)]
enum Source {
    Touch(usize),
    Setter(NodeId),
}

pub(super) fn check(
    model: &Model<'_>,
    topology: &Topology,
    touches: &[Touch<'_>],
    diag: &Diagnostics,
) -> Vec<KernelRace> {
    let mut races = Vec::new();
    let mut reported_touches = vec![false; touches.len()];
    let mut reported_setters: Vec<NodeId> = Vec::new();
    for repeat in 0..model.repeats.len() {
        if topology.orders[model.repeats[repeat].level].is_none() {
            continue; // a cycle was reported
        }
        let (members, accesses) = accesses_under(model, repeat, touches);
        if accesses.is_empty() {
            continue;
        }
        let reach = NextIteration::new(model, topology, repeat, &members);
        let mut by_resource: FxHashMap<&Resource, Vec<&Use>> = FxHashMap::default();
        for access in &accesses {
            by_resource
                .entry(&access.resource)
                .or_default()
                .push(access);
        }
        let mut resources: Vec<_> = by_resource.into_iter().collect();
        // Report in source order of the first access.
        resources.sort_by_key(|(resource, list)| {
            (
                list.iter().map(|a| first_node(a, touches)).min(),
                (*resource).clone(),
            )
        });
        for (_, list) in resources {
            for a in &list {
                for b in &list {
                    if !may_write(a, touches) && !may_write(b, touches) {
                        continue;
                    }
                    if reach.ordered(a.member, b.member) {
                        continue;
                    }
                    // `a` of one iteration is unordered with `b` of the next.
                    for (this, other, earlier) in [(a, b, true), (b, a, false)] {
                        report(
                            (model, &members),
                            repeat,
                            touches,
                            (this, other, earlier),
                            (&mut reported_touches, &mut reported_setters),
                            &mut races,
                            diag,
                        );
                    }
                }
            }
        }
        // Once per access and block: a race of the same access across
        // another block's iterations (an outer one) is another fix, and
        // reported in the same run.
        for access in &accesses {
            if let Source::Touch(t) = access.source {
                reported_touches[t] = false;
            }
        }
        reported_setters.clear();
    }
    races
}

fn first_node(access: &Use, touches: &[Touch<'_>]) -> NodeId {
    match access.source {
        Source::Touch(t) => touches[t].node,
        Source::Setter(node) => node,
    }
}

/// Whether the access writes, or may (a kernel argument: if its parameter
/// writes, which the expansion asserts against where it races).
fn may_write(access: &Use, touches: &[Touch<'_>]) -> bool {
    match access.source {
        Source::Touch(t) => touches[t].access != Access::Read,
        Source::Setter(_) => true,
    }
}

/// The members of `repeat`'s body that hold accesses, and the accesses.
fn accesses_under(
    model: &Model<'_>,
    repeat: RepeatId,
    touches: &[Touch<'_>],
) -> (Vec<Member>, Vec<Use>) {
    let mut members: Vec<Member> = Vec::new();
    let mut member_of: FxHashMap<NodeId, usize> = FxHashMap::default();
    let mut accesses = Vec::new();
    let mut member = |node: NodeId| -> Option<usize> {
        let at = holder_in(model, repeat, node)?;
        Some(*member_of.entry(at).or_insert_with(|| {
            members.push(Member { at });
            members.len() - 1
        }))
    };
    let block = &model.repeats[repeat];
    for (t, touch) in touches.iter().enumerate() {
        // Each iteration's allocation is a buffer of its own.
        let per_iteration = model
            .buffer_named(&touch.buffer)
            .is_some_and(|b| model.is_repeated_by(model.buffers[b].alloc, repeat));
        // `#[disjoint(x)]` on the block: its iterations touch their own parts.
        // A bare `#[disjoint]` claims nothing of host buffers, whose uses
        // are always ordered (naming one is refused).
        let disjoint = block.disjoint.as_ref().is_some_and(|(_, only)| {
            (only.is_empty() && model.host_named(&touch.buffer).is_none())
                || only.iter().any(|b| *b == touch.buffer)
        });
        if per_iteration || disjoint {
            continue;
        }
        if let Some(m) = member(touch.node) {
            accesses.push(Use {
                member: m,
                resource: Resource::Buffer(touch.buffer.clone()),
                source: Source::Touch(t),
            });
        }
    }
    for node in 0..model.nodes.len() {
        for handle in model.handles_set_by(node) {
            if model.handles[handle].repeats.contains(&repeat) {
                continue; // each iteration sets its own
            }
            if let Some(m) = member(node) {
                accesses.push(Use {
                    member: m,
                    resource: Resource::Handle(handle),
                    source: Source::Setter(node),
                });
            }
        }
    }
    (members, accesses)
}

/// The node of `repeat`'s level that is or holds `node` (through
/// conditional bodies), if the block holds it (through nested regions).
/// Paths one iteration apart are found from it: a node inside a nested
/// block or scope reaches that region's end, and is reached from its start.
fn holder_in(model: &Model<'_>, repeat: RepeatId, node: NodeId) -> Option<NodeId> {
    let level = model.repeats[repeat].level;
    let at = model
        .holders(node)
        .find(|&n| model.nodes[n].level == level)?;
    let mut region = model.nodes[at].region;
    while let Some(g) = region {
        if g == Region::Repeat(repeat) {
            return Some(at);
        }
        region = match g {
            Region::Scope(s) => model.scopes[s].region,
            Region::Repeat(r) => model.repeats[r].region,
            Region::Place(p) => model.places[p].region,
        };
    }
    None
}

/// The name an edge between `repeat`'s iterations gives the member `at`:
/// its own, or that of the outermost region of the body holding it.
fn edge_end<'m>(model: &'m Model<'_>, repeat: RepeatId, at: NodeId) -> &'m str {
    let held = super::race::regions(model, at);
    let inside = held
        .iter()
        .take_while(|(g, _)| *g != Region::Repeat(repeat));
    &model.nodes[inside.last().map_or(at, |&(_, start)| start)].name
}

/// Which members of a block's body reach which of its next iteration's.
struct NextIteration {
    /// Per member: the edges of `back` 1 whose source its exit reaches.
    to_edge: BitMatrix,
    /// Per member: the edges of `back` 1 whose target reaches its entry.
    from_edge: BitMatrix,
    edges: usize,
    members: usize,
}

impl NextIteration {
    fn new(model: &Model<'_>, topology: &Topology, repeat: RepeatId, members: &[Member]) -> Self {
        let block = &model.repeats[repeat];
        let edges: Vec<(NodeId, NodeId)> = block
            .carried
            .iter()
            .filter(|c| c.back == 1)
            .map(|c| (c.from, c.to))
            .collect();
        let mut to_edge = BitMatrix::new(members.len(), edges.len());
        let mut from_edge = BitMatrix::new(members.len(), edges.len());
        let mut by_node: FxHashMap<NodeId, Vec<usize>> = FxHashMap::default();
        for (m, member) in members.iter().enumerate() {
            by_node.entry(member.at).or_default().push(m);
        }
        // The walks stay in the body: the block's start and end bound it.
        let stop = |v: NodeId| v == block.start || v == block.end;
        for (e, &(source, target)) in edges.iter().enumerate() {
            for v in walk(source, &topology.predecessors, stop) {
                for &m in by_node.get(&v).into_iter().flatten() {
                    to_edge.set(m, e);
                }
            }
            for v in walk(target, &topology.successors, stop) {
                for &m in by_node.get(&v).into_iter().flatten() {
                    from_edge.set(m, e);
                }
            }
        }
        NextIteration {
            to_edge,
            from_edge,
            edges: edges.len(),
            members: members.len(),
        }
    }

    /// Whether member `u` of every iteration precedes member `v` of the next.
    fn ordered(&self, u: usize, v: usize) -> bool {
        debug_assert!(u < self.members && v < self.members);
        (0..self.edges).any(|e| self.to_edge.get(u, e) && self.from_edge.get(v, e))
    }
}

/// The nodes reachable from `start` along `next` (itself included), not
/// passing through nodes where `stop` holds.
fn walk(start: NodeId, next: &[Vec<NodeId>], stop: impl Fn(NodeId) -> bool) -> Vec<NodeId> {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut stack = vec![start];
    let mut out = Vec::new();
    while let Some(v) = stack.pop() {
        if stop(v) || !seen.insert(v) {
            continue;
        }
        out.push(v);
        stack.extend(next[v].iter().copied());
    }
    out
}

/// Reports `this` access of a racing pair, once per access (in this block):
/// a write is an
/// error; a kernel argument an assertion that its parameter only reads; a
/// handle setter an error at the handle.
#[allow(clippy::too_many_arguments)]
fn report(
    (model, members): (&Model<'_>, &[Member]),
    repeat: RepeatId,
    touches: &[Touch<'_>],
    (this, other, this_earlier): (&Use, &Use, bool),
    (reported_touches, reported_setters): (&mut [bool], &mut Vec<NodeId>),
    races: &mut Vec<KernelRace>,
    diag: &Diagnostics,
) {
    let block = &model.repeats[repeat].syntax.label;
    let var = &model.repeats[repeat].syntax.var;
    let name_of = |a: &Use| model.nodes[first_node(a, touches)].name.clone();
    let (me, peer) = (name_of(this), name_of(other));
    // Which is in the earlier iteration of the unordered pair.
    let (first, second) = if this_earlier {
        (&me, &peer)
    } else {
        (&peer, &me)
    };
    let between = format!("`{first}` of one iteration and `{second}` of the next");
    // An edge between iterations joins members of the block's own body:
    // a nested block, scope or placement by its label.
    let (edge_from, edge_to) = {
        let end = |a: &Use| edge_end(model, repeat, members[a.member].at);
        match this_earlier {
            true => (end(this), end(other)),
            false => (end(other), end(this)),
        }
    };
    match this.source {
        Source::Touch(t) => {
            if std::mem::replace(&mut reported_touches[t], true) {
                return;
            }
            let touch = &touches[t];
            let buffer = &touch.buffer;
            let message = format!(
                "data race on `{buffer}` between iterations of `{block}`: {between} access it, one writing, and no path orders them"
            );
            // Only an operand that names the loop variable can touch a
            // part of its own in each iteration.
            let by_var = crate::model::expr_idents(touch.operand).contains(var);
            let help = match model.host_named(buffer) {
                Some(_) => format!(
                    "order the iterations (`{edge_from}[{var}-1] -> {edge_to}`): the uses of a host buffer are always ordered"
                ),
                None if !by_var => format!(
                    "order the iterations (`{edge_from}[{var}-1] -> {edge_to}`): every iteration of `{block}` uses the same `{buffer}` (it names no part by `{var}`)"
                ),
                None => format!(
                    "order the iterations (`{edge_from}[{var}-1] -> {edge_to}`), or mark `{block}` `#[disjoint({buffer})]` if each of its iterations touches its own part (as with `{buffer}.slice(..)` by `{var}`)"
                ),
            };
            match touch.access {
                Access::Write => diag.error_with_help(touch.operand, message, help),
                Access::Kernel(at) => races.push(KernelRace {
                    node: touch.node,
                    index: at.index,
                    field: at.field,
                    message,
                    label: format!("`{me}`'s kernel writes `{buffer}` through this parameter"),
                    help,
                    unless_writes: None,
                }),
                Access::Read => reported_touches[t] = false,
            }
        }
        Source::Setter(node) => {
            if reported_setters.contains(&node) {
                return;
            }
            reported_setters.push(node);
            let crate::model::Node { uses, .. } = &model.nodes[node];
            let Resource::Handle(handle) = this.resource else {
                return;
            };
            let name = &model.handles[handle].syntax.name;
            let Some(ident) = uses.iter().find(|i| *i == name) else {
                return;
            };
            diag.error_with_help(
                ident,
                format!("the handle `{name}` is set by {between}, and no path orders them"),
                format!("two setters of one handle must be ordered: order the iterations (`{first}[{var}-1] -> {second}`), or declare the handle inside `{block}`"),
            );
        }
    }
}
