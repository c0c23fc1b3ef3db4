//! Semantic checks over the lowered model. Every check reports all of its
//! errors; ordering checks run on levels that are acyclic and propagate
//! reachability as bit rows along a topological order, so the checker stays
//! linear in nodes and edges (times the number of buffers or handles / 64).

mod bits;
mod conditional;
mod dag;
mod iterations;
mod memory;
mod operands;
mod race;
mod rules;

use crate::diag::Diagnostics;
use crate::model::{Model, NodeId};

pub use dag::Topology;
pub use race::KernelRace;
pub(crate) use rules::EXEC_METHODS;

/// Runs every check. Returns the topology (successors, predecessors and
/// per-level topological orders) for the expansion.
pub fn check(model: &Model<'_>, diag: &Diagnostics) -> Topology {
    rules::check(model, diag);
    let topology = dag::check(model, diag);
    let mut topology = topology;
    // With an edge dropped (its label did not resolve), what the ordering
    // checks would report is the missing edge's doing: fix the label first.
    let ordering = !model.dropped_edges;
    memory::check(model, &topology, ordering, diag);
    conditional::check(model, &topology, ordering, diag);
    if ordering {
        topology.kernel_races = race::check(model, &topology, diag);
    }
    topology
}

/// The node of the top graph that holds `node`: itself, or the outermost
/// conditional node whose body holds it.
pub(crate) fn top_level_node(model: &Model<'_>, node: NodeId) -> NodeId {
    model.holders(node).last().unwrap_or(node)
}
