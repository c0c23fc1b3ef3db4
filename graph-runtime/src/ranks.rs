//! The runtime's lock ranks, in one place. Three families of locks order
//! graph work across threads; a thread holding one may take only a lock of
//! a higher rank, or of the same rank at a higher address (which is how two
//! launches that share sets, or two updates across two graphs, lock in one
//! order and cannot wait for each other):
//!
//! 1. [`Rank::ChildGraph`]: a graph being added as a child graph
//!    (`Graph::add_child`); the driver clones it, so no exec of it may
//!    change it meanwhile. Held only around that one node's addition.
//! 2. [`Rank::Graph`]: a root graph's records and driver handle, once an
//!    exec shares them (graph building, per-node exec updates, whole-graph
//!    updates).
//! 3. [`Rank::ResourceSet`]: what a graph's nodes reference (bound slices
//!    and their cudarc events, kernels' modules, children's and device
//!    targets' sets). A launch holds every set it tracks.
//! 4. [`Rank::Allocation`]: the phase of a graph allocation that outlives a
//!    launch (`escape`). A launch holds every one it makes, uses or frees.
//!
//! Every other lock of the runtime is a leaf: nothing is taken while it is
//! held. (A `try_lock` that gives up instead of waiting, as `Graph`'s
//! `Debug` takes a resource set, cannot wait in a cycle, and takes nothing
//! while it holds the set: it is outside the ranks.) No lock of these families is held while user code runs (host-node
//! closures, captured work, `BoundMut`'s views: a buffer lent out is marked,
//! not locked).
//!
//! Debug builds check the order on every acquisition (a thread-local list
//! of what the thread holds) and panic, naming both locks, on a violation:
//! the test below provokes each pair. Release builds compile the check out.

use std::sync::{Mutex, MutexGuard};

/// A lock family, in the order a thread may take them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Rank {
    ChildGraph = 1,
    Graph = 2,
    ResourceSet = 3,
    Allocation = 4,
}

/// A held lock of one of the ranked families; releases its place in the
/// thread's list when dropped.
pub(crate) struct Ranked<G> {
    guard: G,
    #[cfg(debug_assertions)]
    held: (Rank, usize),
}

impl<G> std::ops::Deref for Ranked<G> {
    type Target = G;
    fn deref(&self) -> &G {
        &self.guard
    }
}

impl<G> std::ops::DerefMut for Ranked<G> {
    fn deref_mut(&mut self) -> &mut G {
        &mut self.guard
    }
}

#[cfg(debug_assertions)]
impl<G> Drop for Ranked<G> {
    fn drop(&mut self) {
        HELD.with(|held| {
            let mut held = held.borrow_mut();
            if let Some(at) = held.iter().rposition(|h| *h == self.held) {
                held.remove(at);
            }
        });
    }
}

#[cfg(debug_assertions)]
thread_local! {
    /// The ranked locks this thread holds (taken, or about to be).
    static HELD: std::cell::RefCell<Vec<(Rank, usize)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Locks `mutex` as a lock of `rank`. A poisoned lock is recovered: every
/// ranked lock guards records that a panic cannot leave half-written in a
/// harmful way (lists and flags, each meaningful on its own).
///
/// # Panics
/// In debug builds, when the thread holds a lock that must come after this
/// one.
#[track_caller]
pub(crate) fn lock<T: ?Sized>(rank: Rank, mutex: &Mutex<T>) -> Ranked<MutexGuard<'_, T>> {
    let at = mutex as *const Mutex<T> as *const () as usize;
    #[cfg(debug_assertions)]
    HELD.with(|held| {
        let mut held = held.borrow_mut();
        if let Some(&(r, a)) = held
            .iter()
            .find(|&&(r, a)| r > rank || (r == rank && a >= at))
        {
            // Release the list before unwinding (the guards of the caller
            // unwind through it).
            drop(held);
            panic!(
                "lock order: taking a {rank:?} lock at {at:#x} while holding a {r:?} lock at {a:#x} \
                 (see graph_runtime's ranks module)"
            );
        }
        held.push((rank, at));
    });
    let _ = (at, rank);
    Ranked {
        guard: mutex.lock().unwrap_or_else(|e| e.into_inner()),
        #[cfg(debug_assertions)]
        held: (rank, at),
    }
}

#[cfg(all(test, debug_assertions))]
mod tests {
    use super::*;

    fn panics(f: impl FnOnce() + std::panic::UnwindSafe) -> Option<String> {
        std::panic::catch_unwind(f)
            .err()
            .map(|e| match e.downcast::<String>() {
                Ok(s) => *s,
                Err(_) => String::new(),
            })
    }

    /// Every pair of ranks, both ways: the declared order passes, the
    /// other panics naming both; same rank passes in address order only.
    #[test]
    fn every_pair_is_checked_both_ways() {
        let ranks = [
            Rank::ChildGraph,
            Rank::Graph,
            Rank::ResourceSet,
            Rank::Allocation,
        ];
        for (i, &first) in ranks.iter().enumerate() {
            for &second in &ranks[i + 1..] {
                let (a, b) = (Mutex::new(()), Mutex::new(()));
                {
                    let _outer = lock(first, &a);
                    let _inner = lock(second, &b);
                }
                let message = panics(|| {
                    let _outer = lock(second, &a);
                    let _inner = lock(first, &b);
                })
                .expect("a lock taken out of rank order panics");
                assert!(
                    message.contains(&format!("taking a {first:?} lock"))
                        && message.contains(&format!("holding a {second:?} lock")),
                    "{message}"
                );
            }
        }
        let pair = [Mutex::new(()), Mutex::new(())];
        let (low, high) = (&pair[0], &pair[1]);
        {
            let _low = lock(Rank::ResourceSet, low);
            let _high = lock(Rank::ResourceSet, high);
        }
        assert!(panics(|| {
            let _high = lock(Rank::ResourceSet, high);
            let _low = lock(Rank::ResourceSet, low);
        })
        .is_some());
        // Taking one lock twice is refused too (it would wait for itself).
        assert!(panics(|| {
            let _first = lock(Rank::Graph, low);
            let _again = lock(Rank::Graph, low);
        })
        .is_some());
        // After the panics the thread's list is empty again.
        let _a = lock(Rank::Allocation, low);
    }

    /// Guards dropped out of order leave the list right.
    #[test]
    fn guards_may_drop_in_any_order() {
        let (a, b, c) = (Mutex::new(()), Mutex::new(()), Mutex::new(()));
        let first = lock(Rank::Graph, &a);
        let second = lock(Rank::ResourceSet, &b);
        drop(first);
        let third = lock(Rank::Allocation, &c);
        drop(second);
        drop(third);
        let _again = lock(Rank::ChildGraph, &a);
    }
}
