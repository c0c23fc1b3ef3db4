//! A graph's node records, shared with its execs without copying them, and
//! written by the graph without an atomic operation per node.

use super::Registry;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A graph's [`Registry`], shared with the execs instantiated from it:
/// instantiation takes a reference instead of copying every node record
/// (a tenth of a 10-node graph's instantiation, by instruction count), and
/// the first change after it copies them once (`Arc::make_mut`).
///
/// Every node added takes `&mut` of it; `maybe_shared` lets that skip
/// `make_mut`'s atomic compare-and-swap (a locked instruction a node, about
/// 20 cycles) while no clone was made since the last `make_mut`.
#[derive(Debug, Default)]
pub(crate) struct SharedRegistry {
    /// Never handed out: only `clone` adds an owner, and it sets the flag
    /// (no `Weak` is ever made).
    registry: Arc<Registry>,
    /// False only while `registry` has no other owner.
    maybe_shared: AtomicBool,
}

impl Clone for SharedRegistry {
    fn clone(&self) -> Self {
        // Relaxed: the flag is read only through `&mut self`, and whatever
        // hands that `&mut` to a thread orders this store before it.
        self.maybe_shared.store(true, Ordering::Relaxed);
        SharedRegistry {
            registry: Arc::clone(&self.registry),
            maybe_shared: AtomicBool::new(true),
        }
    }
}

impl From<Registry> for SharedRegistry {
    fn from(registry: Registry) -> Self {
        SharedRegistry {
            registry: Arc::new(registry),
            maybe_shared: AtomicBool::new(false),
        }
    }
}

impl SharedRegistry {
    /// An empty registry in this thread's spare record vectors (see
    /// `spare_records`), filled in place: the record is a few hundred
    /// bytes, and each move of it a copy.
    pub fn with_spare_records() -> Self {
        let mut shared = SharedRegistry::default();
        shared.use_spare_records();
        shared
    }

    /// Whether both are one record (a graph unchanged since its exec was
    /// made, and that exec).
    pub fn ptr_eq(&self, other: &SharedRegistry) -> bool {
        Arc::ptr_eq(&self.registry, &other.registry)
    }

    /// `make_mut`, after which no other owner is left.
    #[cold]
    #[inline(never)]
    fn unshare(&mut self) {
        Arc::make_mut(&mut self.registry);
        // Only once `make_mut` returned (a clone of the records that
        // unwound would leave the `Arc` shared).
        *self.maybe_shared.get_mut() = false;
    }
}

impl std::ops::Deref for SharedRegistry {
    type Target = Registry;
    fn deref(&self) -> &Registry {
        &self.registry
    }
}

impl std::ops::DerefMut for SharedRegistry {
    #[inline]
    fn deref_mut(&mut self) -> &mut Registry {
        if *self.maybe_shared.get_mut() {
            self.unshare();
        }
        let registry = Arc::as_ptr(&self.registry).cast_mut();
        // SAFETY: `maybe_shared` is false, so no clone was made since
        // `unshare` (or `from`, `default`) left this `Arc` the only owner
        // (the field is private: only `clone` adds owners), and no
        // `Weak` exists: `&mut self` is the only way to the record, as
        // `Arc::get_mut` would find (without its atomic operations).
        unsafe { &mut *registry }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_nodes(nodes: usize) -> SharedRegistry {
        let mut registry = Registry::default();
        registry.user_objects = vec![0; nodes];
        SharedRegistry::from(registry)
    }

    #[test]
    fn a_change_after_a_clone_is_not_seen_by_the_other_owner() {
        let mut graph = with_nodes(2);
        let exec = graph.clone();
        assert!(graph.ptr_eq(&exec));
        graph.user_objects.push(7);
        assert!(!graph.ptr_eq(&exec), "the graph copied the records");
        assert_eq!(exec.user_objects, [0, 0]);
        assert_eq!(graph.user_objects, [0, 0, 7]);
        // A clone of the exec's (as an update takes), changed on its side.
        let mut other = exec.clone();
        other.user_objects.clear();
        assert_eq!(exec.user_objects, [0, 0]);
    }

    #[test]
    fn a_sole_owner_again_writes_in_place() {
        let mut graph = with_nodes(1);
        let exec = graph.clone();
        drop(exec);
        let before = Arc::as_ptr(&graph.registry);
        graph.user_objects.push(1);
        assert_eq!(Arc::as_ptr(&graph.registry), before, "no copy");
        assert!(!*graph.maybe_shared.get_mut());
        // And a clone made on another thread is seen here.
        let sent = std::thread::scope(|s| s.spawn(|| graph.clone()).join().unwrap());
        graph.user_objects.push(2);
        assert_eq!(sent.user_objects, [0, 1]);
        assert_eq!(graph.user_objects, [0, 1, 2]);
    }
}
