//! The graph is a DAG: per level, Kahn's algorithm gives a topological order;
//! what it cannot order lies on or behind a cycle, which is reported whole
//! (`cycle: a -> b -> c -> a`).

use crate::diag::Diagnostics;
use crate::model::{LevelId, Model, NodeId, Origin};

/// Adjacency and topological orders, shared by the later checks and by the
/// expansion.
#[derive(Debug)]
pub struct Topology {
    pub successors: Vec<Vec<NodeId>>,
    pub predecessors: Vec<Vec<NodeId>>,
    /// Per level: a topological order of its nodes, or None if it has a cycle.
    pub orders: Vec<Option<Vec<NodeId>>>,
    /// Kernel arguments that race unless their parameters only read (the
    /// expansion asserts it where rustc knows the parameters).
    pub kernel_races: Vec<super::KernelRace>,
}

pub fn check(model: &Model<'_>, diag: &Diagnostics) -> Topology {
    let n = model.nodes.len();
    let mut successors = vec![Vec::new(); n];
    let mut predecessors = vec![Vec::new(); n];
    for level in &model.levels {
        for edge in &level.edges {
            successors[edge.from].push(edge.to);
            predecessors[edge.to].push(edge.from);
        }
    }
    let mut topology = Topology {
        successors,
        predecessors,
        orders: Vec::with_capacity(model.levels.len()),
        kernel_races: Vec::new(),
    };
    for level in 0..model.levels.len() {
        let order = order_level(model, &topology, level, diag);
        topology.orders.push(order);
    }
    topology
}

fn order_level(
    model: &Model<'_>,
    topology: &Topology,
    level: LevelId,
    diag: &Diagnostics,
) -> Option<Vec<NodeId>> {
    let nodes = &model.levels[level].nodes;
    let mut in_degree: Vec<usize> = nodes
        .iter()
        .map(|&v| topology.predecessors[v].len())
        .collect();
    let position = |v: NodeId| nodes.binary_search(&v).ok();
    let mut order = Vec::with_capacity(nodes.len());
    let mut ready: Vec<NodeId> = nodes
        .iter()
        .zip(&in_degree)
        .filter(|(_, &d)| d == 0)
        .map(|(&v, _)| v)
        .collect();
    ready.reverse();
    let mut done = vec![false; nodes.len()];
    peel(
        topology,
        &mut ready,
        &mut in_degree,
        &mut done,
        &mut order,
        position,
    );
    if order.len() == nodes.len() {
        return Some(order);
    }
    // Report one cycle, remove it, peel what it was holding back, repeat.
    while order.len() < nodes.len() {
        let Some(start) = (0..nodes.len()).find(|&i| !done[i]) else {
            break;
        };
        let cycle = find_cycle(topology, nodes[start], &done, position);
        report_cycle(model, &cycle, diag);
        // Its nodes are ordered by force, releasing what they held back.
        ready.extend(cycle.iter().rev());
        peel(
            topology,
            &mut ready,
            &mut in_degree,
            &mut done,
            &mut order,
            position,
        );
    }
    None
}

fn peel(
    topology: &Topology,
    ready: &mut Vec<NodeId>,
    in_degree: &mut [usize],
    done: &mut [bool],
    order: &mut Vec<NodeId>,
    position: impl Fn(NodeId) -> Option<usize>,
) {
    while let Some(v) = ready.pop() {
        let Some(i) = position(v) else { continue };
        if done[i] {
            continue;
        }
        done[i] = true;
        order.push(v);
        for &s in &topology.successors[v] {
            if let Some(j) = position(s) {
                in_degree[j] = in_degree[j].saturating_sub(1);
                if in_degree[j] == 0 && !done[j] {
                    ready.push(s);
                }
            }
        }
    }
}

/// Walks predecessors among unordered nodes (each has one, or Kahn's
/// algorithm would have ordered it) until a node repeats: that loop is a
/// cycle. Returned in edge direction, starting from its earliest node.
fn find_cycle(
    topology: &Topology,
    start: NodeId,
    done: &[bool],
    position: impl Fn(NodeId) -> Option<usize>,
) -> Vec<NodeId> {
    let mut walk = vec![start];
    let mut seen_at = rustc_hash::FxHashMap::default();
    seen_at.insert(start, 0usize);
    let mut current = start;
    loop {
        let next = topology.predecessors[current]
            .iter()
            .copied()
            .find(|&p| position(p).is_some_and(|i| !done[i]));
        let Some(next) = next else {
            // Unreachable for a well-formed peel; report what was walked.
            walk.reverse();
            return walk;
        };
        if let Some(&at) = seen_at.get(&next) {
            let mut cycle: Vec<NodeId> = walk[at..].to_vec();
            cycle.reverse();
            let first = cycle
                .iter()
                .enumerate()
                .min_by_key(|(_, &v)| v)
                .map_or(0, |(i, _)| i);
            cycle.rotate_left(first);
            return cycle;
        }
        seen_at.insert(next, walk.len());
        walk.push(next);
        current = next;
    }
}

fn report_cycle(model: &Model<'_>, cycle: &[NodeId], diag: &Diagnostics) {
    let Some(&first) = cycle.first() else { return };
    // Named by what the user wrote: a scope's free node and a block's or a
    // placement's end are stand-ins of the scope's, block's or placement's
    // name, which the cycle already passes through.
    let written: Vec<&str> = cycle
        .iter()
        .filter(|&&v| {
            !matches!(
                model.nodes[v].origin,
                Origin::ScopeFree(_) | Origin::RepeatEnd(_) | Origin::PlaceEnd(_)
            )
        })
        .map(|&v| model.nodes[v].name.as_str())
        .collect();
    let text = cycle_text(written.into_iter());
    // Point at the edge of the cycle written last: the one that closed it.
    let level = model.nodes[first].level;
    let edges = &model.levels[level].edges;
    let closing = edges.iter().rev().filter(|e| e.tokens.is_some()).find(|e| {
        cycle
            .iter()
            .enumerate()
            .any(|(i, &v)| e.from == v && e.to == cycle[(i + 1) % cycle.len()])
    });
    let help = "a graph must be acyclic; remove or reverse one of these edges \
                (to repeat work, use a `while` node)";
    match closing.and_then(|e| e.tokens.as_ref()) {
        Some(tokens) => diag.error_with_help(tokens, text, help),
        None => diag.error_with_help(&model.nodes[first].label, text, help),
    }
}

/// `cycle: a -> b -> c -> a`; a long cycle keeps its first and last
/// `SHOWN` nodes (`a -> b -> ... (4,990 more) ... -> y -> z -> a`).
fn cycle_text<'n>(names: impl ExactSizeIterator<Item = &'n str>) -> String {
    const SHOWN: usize = 5;
    let len = names.len();
    let mut text = String::from("cycle: ");
    let mut first = None;
    for (i, name) in names.enumerate() {
        first.get_or_insert(name);
        if len > 3 * SHOWN && i == SHOWN {
            text.push_str(&format!(
                "... ({} more) ... -> ",
                group_thousands(len - 2 * SHOWN)
            ));
        }
        if len <= 3 * SHOWN || i < SHOWN || i >= len - SHOWN {
            text.push_str(name);
            text.push_str(" -> ");
        }
    }
    text.push_str(first.unwrap_or_default());
    text
}

/// 4990 as `4,990`.
fn group_thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::cycle_text;

    #[test]
    fn short_cycles_are_whole_and_long_ones_shortened() {
        assert_eq!(
            cycle_text(["a", "b", "c"].into_iter()),
            "cycle: a -> b -> c -> a"
        );
        let names: Vec<String> = (0..5000).map(|i| format!("n{i}")).collect();
        let text = cycle_text(names.iter().map(String::as_str));
        assert_eq!(
            text,
            "cycle: n0 -> n1 -> n2 -> n3 -> n4 -> ... (4,990 more) ... -> \
             n4995 -> n4996 -> n4997 -> n4998 -> n4999 -> n0"
        );
    }
}
