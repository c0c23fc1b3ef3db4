//! What a graph's records say about order: each node's dependencies and
//! their edge kinds, ancestry, and whether a node's place lets it use a
//! graph allocation (ordered after its alloc node, before its free node).

use super::*;

impl Registry {
    /// Notes the kinds of node `index`'s edges from its dependencies (one
    /// per dependency, as added), the full ones implied.
    pub fn note_edge_kinds(&mut self, index: u32, kinds: &[EdgeKind]) {
        let start = self.nodes[index as usize].deps.0;
        self.edge_kinds.extend(
            (start..)
                .zip(kinds)
                .filter(|(_, kind)| **kind != EdgeKind::Full)
                .map(|(at, kind)| (at, *kind)),
        );
    }

    /// Whether node `index` has an incoming programmatic or launch-order
    /// edge (it completes after that kernel only by waiting for it).
    pub fn follows_programmatic_edge(&self, index: usize) -> bool {
        let (start, end) = self.nodes[index].deps;
        self.edge_kinds
            .iter()
            .any(|&(at, _)| (start..end).contains(&at))
    }

    /// The dependency indices of node `index`.
    pub fn deps(&self, index: usize) -> &[u32] {
        let (start, end) = self.nodes[index].deps;
        &self.dep_list[start as usize..end as usize]
    }

    /// Why node `index` may not use allocation `alloc` of this registry:
    /// it must be ordered after the alloc node and before the free node
    /// (through its top-level node, for a node of a conditional body).
    /// None if it may, or if there is no such allocation.
    pub fn alloc_use_error(&self, index: usize, alloc: u32) -> Option<OrderRule> {
        let info = self.allocs.get(alloc as usize)?;
        let top = self.nodes.get(index)?.top as usize;
        let alloc_label = self.alloc_label(info);
        if info.node().is_some() && self.allocs_before(top).binary_search(&alloc).is_err() {
            return Some(OrderRule::UseBeforeAlloc {
                allocation: alloc_label.to_string(),
            });
        }
        match info.freed_by {
            Some(free) if !self.is_ancestor(top, free as usize) => Some(OrderRule::UseAfterFree {
                allocation: alloc_label.to_string(),
                free: self.label(free as usize).to_string(),
            }),
            _ => None,
        }
    }

    /// An allocation's name in messages: its alloc node's label (that of
    /// the graph that made it, for one bound with `bind_escaped`).
    pub fn alloc_label<'r>(&'r self, info: &'r AllocInfo) -> Cow<'r, str> {
        match &info.origin {
            AllocOrigin::Node(node) => self.label(*node as usize),
            AllocOrigin::Escaped(state) => Cow::Borrowed(&state.label),
        }
    }

    /// Node `index` and the conditional nodes holding it, innermost first,
    /// with each one's level.
    pub(crate) fn holders(&self, index: u32) -> Vec<(u32, u64)> {
        let mut chain = Vec::new();
        let mut at = index;
        while let Some(info) = self.nodes.get(at as usize) {
            chain.push((at, info.level));
            at = info.holder;
        }
        chain
    }

    /// Whether the existing node `earlier` always runs before a new node at
    /// `level`, held by `holder`, after `deps`, or never in the same launch
    /// as it (the two sit in different arms of one conditional node).
    pub fn ordered_before_new(
        &self,
        earlier: u32,
        level: u64,
        holder: Option<u32>,
        deps: &[Node],
    ) -> bool {
        let mine = self.holders(earlier);
        // The new node's chain: itself (not yet recorded), then its holders.
        let mut theirs: Vec<(Option<u32>, u64)> = vec![(None, level)];
        if let Some(h) = holder {
            theirs.extend(self.holders(h).into_iter().map(|(n, l)| (Some(n), l)));
        }
        // The innermost level both are in, and each one's node there.
        for (new_side, level) in theirs {
            let Some(&(old_side, _)) = mine.iter().find(|(_, l)| *l == level) else {
                continue;
            };
            return match new_side {
                None => deps.iter().any(|d| {
                    d.index == old_side || self.is_ancestor(old_side as usize, d.index as usize)
                }),
                // Both inside one conditional node: in different arms.
                Some(new_side) if new_side == old_side => true,
                Some(new_side) => self.is_ancestor(old_side as usize, new_side as usize),
            };
        }
        false
    }

    /// Whether node `a` is an ancestor of node `b` (a path of edges a -> b).
    /// A node is recorded after its dependencies, so such a path passes
    /// only nodes numbered between the two: the search stays there (and
    /// costs what lies between them, not the whole graph).
    pub fn is_ancestor(&self, a: usize, b: usize) -> bool {
        if a >= b {
            return false;
        }
        // seen[n - a - 1] for the nodes a < n < b.
        let mut seen = vec![false; b - a - 1];
        let mut stack: Vec<u32> = self.deps(b).to_vec();
        while let Some(n) = stack.pop() {
            let n = n as usize;
            if n == a {
                return true;
            }
            if n > a && !std::mem::replace(&mut seen[n - a - 1], true) {
                stack.extend_from_slice(self.deps(n));
            }
        }
        false
    }
}
