//! The memory each kernel node of a `cuda_graph!` graph was built with,
//! so that a per-node update cannot void the macro's race check.
//!
//! The macro proves at compile time that no two unordered nodes race on a
//! buffer, reasoning on the arguments as written (`x`, `x.slice(..)` by a
//! lane's index, `#[disjoint]` parts). A per-node update
//! ([`Exec::set_kernel_args`](crate::Exec::set_kernel_args)) takes any
//! buffer of the graph: pointed at another lane's part, a node would race
//! with that lane. So in a graph the macro checked, an update may narrow
//! the memory a node touches, never reach past it; other memory takes a
//! rebuild, whose arguments the macro's check covers.

use crate::buffer::BufferUse;

/// One buffer use of a kernel node as built: its node, byte span, and
/// whether the node may write it.
#[derive(Debug, Clone, Copy)]
pub(super) struct BuiltUse {
    pub node: u32,
    pub bytes: (u64, u64),
    pub write: bool,
    /// A part (`Buf::slice`), which a `#[disjoint]` block's check compares.
    pub part: bool,
}

/// The kernel nodes' uses of a graph the macro checked (none recorded for
/// graphs built with the builder API, which promises no race check).
#[derive(Debug, Default, Clone)]
pub(crate) struct BuiltUses {
    checked: bool,
    /// In node order: nodes are recorded as they are added.
    uses: Vec<BuiltUse>,
}

impl BuiltUses {
    /// Marks the graph as one whose races the macro checked.
    pub fn mark_checked(&mut self) {
        self.checked = true;
    }

    /// Whether the macro checked the graph these uses are of.
    pub fn is_checked(&self) -> bool {
        self.checked
    }

    /// Makes room for about `nodes` more nodes' uses (one each), if the
    /// graph is checked: a build of known size does not grow the table.
    pub fn reserve(&mut self, nodes: usize) {
        if self.checked {
            let _ = self.uses.try_reserve(nodes);
        }
    }

    /// The uses' vector (for `spare_records`), leaving none.
    pub(super) fn take_buffer(&mut self) -> Vec<BuiltUse> {
        std::mem::take(&mut self.uses)
    }

    /// Records into `buffer` (empty: `spare_records`) from now on.
    pub(super) fn use_buffer(&mut self, buffer: Vec<BuiltUse>) {
        debug_assert!(self.uses.is_empty() && buffer.is_empty());
        self.uses = buffer;
    }

    /// Records kernel node `node`'s uses, if the graph is checked.
    pub fn record(&mut self, node: u32, uses: &[BufferUse]) {
        if self.checked {
            for u in uses {
                self.uses.push(BuiltUse {
                    node,
                    bytes: u.bytes,
                    write: u.write,
                    part: u.part,
                });
            }
        }
    }

    /// The uses of nodes `first..end`, in node order.
    pub(super) fn of_nodes(&self, first: u32, end: u32) -> &[BuiltUse] {
        let lo = self.uses.partition_point(|u| u.node < first);
        let hi = self.uses.partition_point(|u| u.node < end);
        &self.uses[lo..hi.max(lo)]
    }

    /// Whether an update of `node` may make `new` use: always in an
    /// unchecked graph; else an empty span, or one inside a span the node
    /// was built with that it could write if `new` writes.
    pub fn allows(&self, node: u32, new: &BufferUse) -> bool {
        // A read of memory no node may write (bound with `bind`) races
        // with nothing.
        if !self.checked || new.bytes.0 >= new.bytes.1 || (!new.write && !new.writable) {
            return true;
        }
        let first = self.uses.partition_point(|u| u.node < node);
        self.uses[first..]
            .iter()
            .take_while(|u| u.node == node)
            .any(|u| {
                u.bytes.0 <= new.bytes.0 && new.bytes.1 <= u.bytes.1 && (u.write || !new.write)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn use_of(bytes: (u64, u64), write: bool) -> BufferUse {
        BufferUse {
            root: 1,
            alloc: None,
            write,
            writable: true,
            bytes,
            part: false,
        }
    }

    #[test]
    fn a_checked_graph_s_update_may_narrow_a_use_but_not_widen_or_move_it() {
        let mut built = BuiltUses::default();
        built.mark_checked();
        built.record(0, &[use_of((0, 64), true)]);
        built.record(3, &[use_of((64, 128), true), use_of((256, 512), false)]);
        assert!(built.allows(3, &use_of((64, 128), true)));
        assert!(built.allows(3, &use_of((80, 96), true)), "narrower");
        assert!(
            built.allows(3, &use_of((300, 400), false)),
            "a read inside a read"
        );
        assert!(
            !built.allows(3, &use_of((300, 400), true)),
            "a write where it only read"
        );
        assert!(!built.allows(3, &use_of((0, 64), true)), "node 0's part");
        assert!(!built.allows(3, &use_of((64, 129), false)), "past its end");
        assert!(
            !built.allows(1, &use_of((0, 8), false)),
            "a node built with no buffer"
        );
        assert!(
            built.allows(1, &use_of((8, 8), true)),
            "an empty span touches nothing"
        );
    }

    #[test]
    fn a_graph_the_macro_did_not_check_takes_any_update() {
        let mut built = BuiltUses::default();
        built.record(0, &[use_of((0, 64), false)]);
        assert!(built.allows(0, &use_of((1000, 2000), true)));
    }
}
