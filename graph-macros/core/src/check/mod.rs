//! Semantic checks over the lowered model. Every check reports all of its
//! errors; ordering checks run on levels that are acyclic and propagate
//! reachability as bit rows along a topological order, so the checker stays
//! linear in nodes and edges (times the number of buffers or handles / 64).

mod bits;
mod conditional;
mod dag;
mod iterations;
mod memory;
mod race;
mod rules;

use crate::diag::Diagnostics;
use crate::model::{Model, NodeId};

pub use dag::Topology;
pub use race::KernelRace;

/// Runs every check. Returns the topology (successors, predecessors and
/// per-level topological orders) for the expansion.
pub fn check(model: &Model<'_>, diag: &Diagnostics) -> Topology {
    rules::check(model, diag);
    let topology = dag::check(model, diag);
    let mut topology = topology;
    memory::check(model, &topology, diag);
    conditional::check(model, &topology, diag);
    topology.kernel_races = race::check(model, &topology, diag);
    topology
}

/// The node of the top graph that holds `node`: itself, or the outermost
/// conditional node whose body holds it.
pub(crate) fn top_level_node(model: &Model<'_>, node: NodeId) -> NodeId {
    model.holders(node).last().unwrap_or(node)
}
