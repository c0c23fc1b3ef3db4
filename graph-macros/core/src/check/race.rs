//! Data races: two nodes that access one buffer, at least one of them
//! writing, with no path between them in the graph (they may run at the
//! same time, in either order).
//!
//! Accesses are the buffer operands of kernel, copy and fill nodes: a
//! copy's source is read, its destination and a fill's are written, and a
//! kernel argument is read or written as the kernel's parameter declares
//! (`Out<T>` writes), which only rustc knows; a host node whose closure
//! takes a host buffer reads it (`&[T]`) or writes it (`&mut [T]`): a kernel argument unordered
//! with another access is checked by a const assertion that the expansion
//! puts at the argument (`KernelRace`). A read-only binding (a `&CudaSlice`
//! parameter) is a read. Host, child-graph and capture nodes are opaque
//! (the capture's `unsafe` covers what it touches); `#[disjoint(x)]` on a
//! node (or on a conditional node, for its bodies) leaves its accesses to
//! `x` out, for deliberate disjoint writes.
//!
//! Nodes in a conditional body are ordered with the nodes outside through
//! their conditional node; nodes in two bodies of one conditional node
//! (`if`/`else`, `switch` arms) never run in one launch. Each level's
//! pairs are found with bit rows of the accesses ordered before and after
//! each node, propagated along its topological order in blocks of columns
//! (linear in nodes and edges times the accesses / 64, memory bounded).

use super::bits::BitMatrix;
use super::operands::buffer_names;
use super::Topology;
use crate::diag::Diagnostics;
use crate::model::{argument_values, Model, NodeId, Op};
use rustc_hash::FxHashMap;
use syn::Expr;

/// A kernel argument that races unless the kernel's parameter only reads
/// it: the expansion asserts, in a const at the argument, that the
/// parameter does not write.
#[derive(Debug, Clone)]
pub struct KernelRace {
    pub node: NodeId,
    /// The argument's index.
    pub index: usize,
    /// The field of a struct literal argument (its position in the
    /// literal) whose buffer races, if it is one.
    pub field: Option<usize>,
    /// The error rustc shows if the parameter writes, its label at the
    /// argument, and a hint.
    pub message: String,
    pub label: String,
    pub help: String,
    /// A kernel argument that races with this one and reports the pair
    /// itself when its parameter writes: the check then holds (one error
    /// for one missing edge).
    /// (node, argument index, struct literal field).
    pub unless_writes: Option<(NodeId, usize, Option<usize>)>,
}

/// How a node accesses a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    Read,
    Write,
    /// A kernel argument: a write if the kernel's parameter writes.
    Kernel(ArgAt),
}

/// A kernel argument: its index, and for a buffer in a struct literal
/// argument (`kernel_struct!`), the field's position in the literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ArgAt {
    pub index: usize,
    pub field: Option<usize>,
}

pub(super) struct Touch<'a> {
    pub node: NodeId,
    pub buffer: String,
    /// Where to report it: the operand, or a host node's parameter.
    pub operand: &'a dyn quote::ToTokens,
    pub access: Access,
}

/// The unordered accesses found for one access.
#[derive(Default)]
struct Peers {
    /// Accesses this one reports (see `check`), and the first of them.
    reported: usize,
    first: Option<usize>,
}

/// Columns per block: bounds the bit rows to nodes x 4,096 bits.
const BLOCK: usize = 4096;

pub fn check(model: &Model<'_>, topology: &Topology, diag: &Diagnostics) -> Vec<KernelRace> {
    check_struct_arguments(model, diag);
    let mut touches = touches(model);
    check_disjoint_names(model, &touches, diag);
    touches.retain(|t| !disjoint(model, t.node, &t.buffer));
    // Races within one iteration (or no block) first: a missing edge in a
    // block's body races there and, through it, between iterations; the
    // error whose fix is that edge comes first.
    if touches.len() < 2 {
        return super::iterations::check(model, topology, &touches, diag);
    }
    let mut races = Vec::new();
    // Per level: the accesses under it, each with the node of the level
    // that is or holds the accessing node.
    let mut by_level: Vec<Vec<(usize, NodeId)>> = vec![Vec::new(); model.levels.len()];
    for (t, touch) in touches.iter().enumerate() {
        for node in model.holders(touch.node) {
            by_level[model.nodes[node].level].push((t, node));
        }
    }
    let mut peers: Vec<Peers> = (0..touches.len()).map(|_| Peers::default()).collect();
    for (level, columns) in by_level.into_iter().enumerate() {
        if let Some(Some(order)) = topology.orders.get(level) {
            level_pairs(topology, &touches, columns, order, &mut peers);
        }
    }
    for (t, touch) in touches.iter().enumerate() {
        let Some(first) = peers[t].first else {
            continue;
        };
        let (node, peer) = (&model.nodes[touch.node], &touches[first]);
        let more = match peers[t].reported - 1 {
            0 => String::new(),
            1 => " (and 1 more node)".to_string(),
            n => format!(" (and {n} more nodes)"),
        };
        let buffer = &touch.buffer;
        let peer_name = &model.nodes[peer.node].name;
        // An edge can join only nodes of one level: the hint names the
        // nodes (or the conditional nodes holding them) that share one.
        let (edge_from, edge_to) = edge_ends(model, touch.node, peer.node);
        let peer_access = match peer.access {
            Access::Read => "reads it",
            Access::Write => "writes it",
            Access::Kernel(_) => "passes it to a kernel",
        };
        match touch.access {
            Access::Write => diag.error_with_help(
                touch.operand,
                format!(
                    "data race on `{buffer}`: `{}` writes it while `{peer_name}` {peer_access}{more}, and no path orders them",
                    node.name
                ),
                match model.host_named(buffer) {
                    Some(_) => format!(
                        "add an edge ({edge_from} -> {edge_to} or {edge_to} -> {edge_from}): the uses of a host buffer are always ordered"
                    ),
                    None => format!(
                        "add an edge ({edge_from} -> {edge_to} or {edge_to} -> {edge_from}), or mark one of them `#[disjoint({buffer})]` if their accesses never overlap"
                    ),
                },
            ),
            Access::Kernel(at) => races.push(KernelRace {
                node: touch.node,
                index: at.index,
                field: at.field,
                // Two kernel arguments that race with each other first: the
                // earlier one reports the pair if its parameter writes.
                unless_writes: match peer.access {
                    Access::Kernel(peer_at) if first < t && peers[first].first == Some(t) => {
                        Some((peer.node, peer_at.index, peer_at.field))
                    }
                    _ => None,
                },
                message: format!(
                    "data race on `{buffer}`: `{}` writes it while `{peer_name}` {peer_access}{more}, and no path orders them",
                    node.name
                ),
                label: format!("`{}`'s kernel writes `{buffer}` through this parameter", node.name),
                help: format!(
                    "add an edge ({edge_from} -> {edge_to} or {edge_to} -> {edge_from}), or mark one of them `#[disjoint({buffer})]` if their accesses never overlap"
                ),
            }),
            Access::Read => {}
        }
    }
    races.extend(super::iterations::check(model, topology, &touches, diag));
    races
}

/// The names an edge ordering `a` and `b` would join: the nodes
/// themselves, or, for a node in a conditional body, the conditional node
/// holding it in the level the other is in.
fn edge_ends<'m>(model: &'m Model<'_>, a: NodeId, b: NodeId) -> (&'m str, &'m str) {
    let theirs: Vec<NodeId> = model.holders(b).collect();
    for mine in model.holders(a) {
        let level = model.nodes[mine].level;
        if let Some(&other) = theirs.iter().find(|&&n| model.nodes[n].level == level) {
            let (mine_in, other_in) = (regions(model, mine), regions(model, other));
            // An edge joins members of one region: each end is lifted to
            // the outermost of its regions that does not hold the other.
            type Held = [(crate::model::Region, NodeId)];
            let lift = |node: NodeId, own: &Held, peer: &Held| {
                own.iter()
                    .rev()
                    .find(|entry| !peer.contains(entry))
                    .map_or(node, |&(_, start)| start)
            };
            let (a, b) = (
                lift(mine, &mine_in, &other_in),
                lift(other, &other_in, &mine_in),
            );
            return (&model.nodes[a].name, &model.nodes[b].name);
        }
    }
    (&model.nodes[a].name, &model.nodes[b].name)
}

/// The regions (repeated blocks, scopes, placements) holding `node` in its
/// level, innermost first, each with the node that names it in edges.
pub(super) fn regions(model: &Model<'_>, node: NodeId) -> Vec<(crate::model::Region, NodeId)> {
    use crate::model::Region;
    let mut out = Vec::new();
    let mut region = model.nodes[node].region;
    while let Some(g) = region {
        let (start, parent) = match g {
            Region::Scope(s) => (model.scopes[s].alloc, model.scopes[s].region),
            Region::Repeat(r) => (model.repeats[r].start, model.repeats[r].region),
            Region::Place(p) => (model.places[p].start, model.places[p].region),
        };
        out.push((g, start));
        region = parent;
    }
    out
}

/// Every buffer access of the graph's nodes, but those `#[disjoint]` leaves
/// out.
pub(super) fn touches<'a>(model: &Model<'a>) -> Vec<Touch<'a>> {
    let mut out = Vec::new();
    for (id, node) in model.nodes.iter().enumerate() {
        let mut add = |operand: &'a Expr, access: Access| {
            for buffer in buffer_names(model, operand) {
                out.push(Touch {
                    node: id,
                    buffer,
                    operand,
                    access,
                });
            }
        };
        match node.op {
            Op::Kernel(k) => {
                for (i, arg) in k.args.iter().enumerate() {
                    for (field, value) in argument_values(arg) {
                        // Host memory is no kernel argument (`rules`
                        // reports it): no race of it to report too.
                        if model.host_memory(value).is_some() {
                            continue;
                        }
                        // A read-only binding is refused where a parameter writes.
                        let access = if model.read_only_param(value).is_some() {
                            Access::Read
                        } else {
                            Access::Kernel(ArgAt { index: i, field })
                        };
                        add(value, access);
                    }
                }
            }
            Op::Copy { src, dst } => {
                add(src, Access::Read);
                add(dst, Access::Write);
            }
            Op::Fill { dst, .. } => add(dst, Access::Write),
            Op::Host {
                param: Some(param), ..
            } if model.host_named(&param.name.to_string()).is_some() => out.push(Touch {
                node: id,
                buffer: param.name.to_string(),
                operand: param.name,
                access: match param.write {
                    true => Access::Write,
                    false => Access::Read,
                },
            }),
            _ => {}
        }
    }
    out
}

/// A struct literal argument names every field: the fields a `..base`
/// brings in would pass buffers the race and read-only checks cannot see.
fn check_struct_arguments(model: &Model<'_>, diag: &Diagnostics) {
    for node in &model.nodes {
        let Op::Kernel(k) = node.op else { continue };
        for arg in &k.args {
            if let Expr::Struct(syn::ExprStruct {
                dot2_token: Some(dots),
                rest,
                ..
            }) = arg
            {
                let tokens = quote::quote!(#dots #rest);
                diag.error_with_help(
                    tokens,
                    "a struct argument names each of its fields: `..` would pass buffers the checks cannot see",
                    "write every field of the struct literal",
                );
            }
        }
    }
}

/// `#[disjoint(x)]` names buffers that the node (or its bodies, or a
/// repeated block's nodes) accesses.
fn check_disjoint_names(model: &Model<'_>, touches: &[Touch<'_>], diag: &Diagnostics) {
    let host = |name: &syn::Ident| {
        let found = model.host_named(&name.to_string()).is_some();
        if found {
            diag.error_with_help(
                name,
                format!("`#[disjoint({name})]`: `{name}` is a host buffer, whose uses are always ordered"),
                "the CPU reads and writes host memory, where a race is undefined behaviour: order the nodes that use it with an edge",
            );
        }
        found
    };
    for (id, repeat) in model.repeats.iter().enumerate() {
        let Some((_, names)) = &repeat.disjoint else {
            continue;
        };
        for name in names {
            if host(name) {
                continue;
            }
            let accessed = touches
                .iter()
                .any(|t| *name == t.buffer && model.is_repeated_by(t.node, id));
            if !accessed {
                diag.error_with_help(
                    name,
                    format!(
                        "`#[disjoint({name})]`: no node of `{}` accesses `{name}`",
                        repeat.syntax.label
                    ),
                    "name buffers the block's nodes pass to kernels, copies or fills",
                );
            }
        }
    }
    for (id, node) in model.nodes.iter().enumerate() {
        let Some((_, names)) = &node.attrs.disjoint else {
            continue;
        };
        for name in names {
            if host(name) {
                continue;
            }
            let accessed = touches
                .iter()
                .any(|t| *name == t.buffer && holds(model, id, t.node));
            if !accessed {
                diag.error_with_help(
                    name,
                    format!("`#[disjoint({name})]`: `{}` does not access `{name}`", node.name),
                    "name buffers the node (or, for a conditional node, its bodies) passes to kernels, copies or fills",
                );
            }
        }
    }
}

/// Whether `holder` is `node` or a conditional node whose body holds it.
fn holds(model: &Model<'_>, holder: NodeId, node: NodeId) -> bool {
    model.holders(node).any(|n| n == holder)
}

/// Whether `#[disjoint]` on the node, or on a conditional node whose body
/// holds it, leaves its accesses to `buffer` out.
fn disjoint(model: &Model<'_>, node: NodeId, buffer: &str) -> bool {
    // Host memory is never left out: the CPU reads and writes it, where
    // a race is undefined behaviour (the runtime refuses one too).
    if model.host_named(buffer).is_some() {
        return false;
    }
    let leaves_out = |attr: &Option<(proc_macro2::Span, Vec<syn::Ident>)>| match attr {
        Some((_, only)) => only.is_empty() || only.iter().any(|b| *b == buffer),
        None => false,
    };
    // (`#[disjoint]` on a repeated block is about its iterations only:
    // see `iterations`.)
    model
        .holders(node)
        .any(|n| leaves_out(&model.nodes[n].attrs.disjoint))
}

/// Records, for the accesses held by nodes of `level` (directly or in a
/// body), the unordered pairs whose nodes are different nodes of `level`.
fn level_pairs(
    topology: &Topology,
    touches: &[Touch<'_>],
    mut columns: Vec<(usize, NodeId)>,
    order: &[NodeId],
    peers: &mut [Peers],
) {
    // Columns: the accesses under this level, grouped by buffer.
    if columns.len() < 2 {
        return;
    }
    columns.sort_by(|a, b| touches[a.0].buffer.cmp(&touches[b.0].buffer));
    // Each column's buffer range [start, end).
    let mut range = vec![(0, 0); columns.len()];
    let mut start = 0;
    for c in 1..=columns.len() {
        if c == columns.len() || touches[columns[c].0].buffer != touches[columns[start].0].buffer {
            range[start..c].fill((start, c));
            start = c;
        }
    }
    // Only buffers with two accesses, one of which may write, can race.
    let contested = |c: usize| {
        let (s, e) = range[c];
        e - s > 1
            && columns[s..e]
                .iter()
                .any(|(t, _)| touches[*t].access != Access::Read)
    };
    let row: FxHashMap<NodeId, usize> = order.iter().enumerate().map(|(i, &v)| (v, i)).collect();
    for block in (0..columns.len()).step_by(BLOCK) {
        let block_end = (block + BLOCK).min(columns.len());
        if !(block..block_end).any(contested) {
            continue;
        }
        let width = block_end - block;
        // before[v]: the block's accesses held by v or a node before it;
        // after[v]: by v or a node after it.
        let mut before = BitMatrix::new(order.len(), width);
        let mut after = BitMatrix::new(order.len(), width);
        for (c, (_, rep)) in columns[block..block_end].iter().enumerate() {
            before.set(row[rep], c);
            after.set(row[rep], c);
        }
        for &v in order {
            for p in &topology.predecessors[v] {
                before.union_into(row[&v], row[p]);
            }
        }
        for &v in order.iter().rev() {
            for s in &topology.successors[v] {
                after.union_into(row[&v], row[s]);
            }
        }
        // Every access whose buffer has columns in this block, against them.
        let mut c = 0;
        while c < columns.len() {
            let (s, e) = range[c];
            let (lo, hi) = (s.max(block), e.min(block_end));
            if lo < hi && contested(c) {
                for &(t, rep) in &columns[s..e] {
                    // Clear in both rows: neither before nor after `rep`,
                    // nor held by it (its own accesses are set in both).
                    for p in before.clear_in_both(&after, row[&rep], lo - block, hi - block) {
                        note(touches, &mut peers[t], t, columns[block + p].0);
                    }
                }
            }
            c = e;
        }
    }
}

/// Records that access `other` is unordered with access `t`, if `t`
/// reports it: a write reports every access but earlier writes (which
/// reported it); a kernel argument reports reads and kernel arguments (a
/// write reports it); a read reports nothing.
fn note(touches: &[Touch<'_>], peers: &mut Peers, t: usize, other: usize) {
    let reports = match (touches[t].access, touches[other].access) {
        (Access::Write, Access::Write) => other > t,
        (Access::Write, _) => true,
        (Access::Kernel(_), Access::Write) => false,
        (Access::Kernel(_), _) => true,
        (Access::Read, _) => false,
    };
    if reports {
        peers.reported += 1;
        peers.first.get_or_insert(other);
    }
}
