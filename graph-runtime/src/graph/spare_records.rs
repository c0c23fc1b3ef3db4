//! The record vectors of the last graph a thread dropped, kept for the
//! next root graph it makes.
//!
//! A program that rebuilds a graph to update its exec (`rebuild`, then
//! `update`) or that builds many small graphs makes the same few vectors
//! per build: node records, labels, dependencies, iterations, uses. Their
//! allocations were about 600 of a 10-node build's 14,000 instructions
//! (`scripts/build-profile 1 10`), and their frees as many at its drop;
//! taken from the graph dropped before, they cost a thread-local swap.

use super::built_uses::BuiltUse;
use super::Registry;
use crate::node::NodeInfo;
use std::cell::Cell;

/// Vectors holding more than this go back to the allocator: a thread
/// keeps at most this much for its next graph (a few thousand nodes').
const MOST_BYTES: usize = 512 << 10;

/// A dropped registry's vectors, emptied.
#[derive(Default)]
pub(super) struct Records {
    pub nodes: Vec<NodeInfo>,
    pub labels: String,
    pub label_indices: Vec<usize>,
    pub dep_list: Vec<u32>,
    pub uses: Vec<BuiltUse>,
}

thread_local! {
    static SPARE: Cell<Option<Records>> = const { Cell::new(None) };
}

impl Records {
    /// The memory the vectors hold.
    fn bytes(&self) -> usize {
        fn of<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        of(&self.nodes)
            + self.labels.capacity()
            + of(&self.label_indices)
            + of(&self.dep_list)
            + of(&self.uses)
    }
}

/// Keeps `registry`'s vectors for this thread's next graph if they hold
/// node records and at most `MOST_BYTES`, unless the vectors kept already
/// are larger.
pub(super) fn keep(registry: &mut Registry) {
    if registry.nodes.capacity() == 0 {
        return;
    }
    let mut records = registry.take_records();
    if records.bytes() > MOST_BYTES {
        return;
    }
    records.nodes.clear();
    records.labels.clear();
    records.label_indices.clear();
    records.dep_list.clear();
    records.uses.clear();
    // (During the thread's teardown there is nowhere to keep them.)
    let _ = SPARE.try_with(|spare| {
        let kept = spare.take();
        // The larger set stays (the one a rebuild loop's graphs fill).
        let larger = match kept {
            Some(kept) if kept.nodes.capacity() >= records.nodes.capacity() => kept,
            _ => records,
        };
        spare.set(Some(larger));
    });
}

/// The vectors kept by this thread, if any (empty, with their capacity).
pub(super) fn take() -> Option<Records> {
    SPARE.try_with(Cell::take).ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::SharedRegistry;

    #[test]
    fn a_dropped_registry_lends_its_vectors_to_the_next_one_emptied() {
        // (The test's own thread: nothing else keeps vectors here.)
        std::thread::spawn(|| {
            let mut registry = SharedRegistry::with_spare_records();
            registry.reserve(64);
            let capacity = registry.nodes.capacity();
            assert!(capacity >= 64);
            drop(registry);
            let next = SharedRegistry::with_spare_records();
            assert_eq!(next.nodes.capacity(), capacity, "the dropped one's vector");
            assert!(next.nodes.is_empty() && next.labels().is_empty());
            assert!(take().is_none(), "handed out once");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn large_or_empty_registries_keep_nothing() {
        std::thread::spawn(|| {
            drop(Registry::default());
            assert!(take().is_none(), "no memory to keep");
            let mut large = Registry::default();
            large.reserve(MOST_BYTES / std::mem::size_of::<NodeInfo>() + 1);
            drop(large);
            assert!(take().is_none(), "too large to keep");
        })
        .join()
        .unwrap();
    }
}
