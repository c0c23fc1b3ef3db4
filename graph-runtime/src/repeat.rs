//! Support for repeated blocks (`label: for i in 0..n { ... }` in
//! `cuda_graph!`): the count, the labels of repeated nodes (`step[17]`),
//! dependency lists assembled per iteration, and the node tables of typed
//! accessors. Used by generated code; not a stable API.

use crate::error::{ArgumentRefusal, GraphError, Result};
use crate::node::{EdgeKind, Node};

/// A repeated block's count: an integer evaluated when the graph is built.
#[diagnostic::on_unimplemented(
    message = "a repeated block's count must be an integer, not `{Self}`",
    label = "the count of `for i in 0..count`"
)]
pub trait Count: sealed::Sealed + Copy + std::fmt::Display {
    /// The count, or None if it is negative or does not fit a `usize`.
    fn to_count(self) -> Option<usize>;

    /// [`count`], as the DSL calls it: through the trait, so that a count
    /// of another type is one error at the count, with no note pointing
    /// into this file.
    #[doc(hidden)]
    #[inline(always)]
    fn __checked(self, label: &str) -> Result<usize> {
        count(label, self)
    }
}

macro_rules! count_for {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        #[diagnostic::do_not_recommend]
        impl Count for $t {
            #[inline(always)]
            fn to_count(self) -> Option<usize> {
                usize::try_from(self).ok()
            }
        }
    )*};
}
count_for!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);

impl<C: Count> sealed::Sealed for &C {}
#[diagnostic::do_not_recommend]
impl<C: Count> Count for &C {
    #[inline(always)]
    fn to_count(self) -> Option<usize> {
        (*self).to_count()
    }
}

mod sealed {
    pub trait Sealed {}
}

/// The count of the repeated block `label`, or an error naming it.
///
/// # Errors
/// [`GraphError::InvalidArguments`] for a negative count, or one past the
/// nodes a graph can hold (`u32::MAX`: a block of more iterations would
/// run until memory failed, rather than fail at once).
pub fn count<C: Count>(label: &str, count: C) -> Result<usize> {
    match count.to_count() {
        Some(n) if n <= crate::node::MAX_NODES => Ok(n),
        _ => Err(GraphError::arguments(label, refused_count(count))),
    }
}

/// Why `count` (an integer of at most 128 bits, negative or past the
/// nodes a graph holds) is refused. Its decimal spelling parses into an
/// `i128` (negative) or a `u128` (past `usize` is past the most nodes too).
#[cold]
fn refused_count(count: impl std::fmt::Display) -> ArgumentRefusal {
    let spelled = count.to_string();
    match spelled.parse::<i128>() {
        Ok(count) if count < 0 => ArgumentRefusal::NegativeCount { count },
        _ => ArgumentRefusal::CountPastMostNodes {
            count: spelled.parse().unwrap_or(u128::MAX),
            most: crate::node::MAX_NODES,
        },
    }
}

/// A reusable buffer for the labels of repeated nodes (`step[3][17]`),
/// so a build of thousands of them does not allocate a string per node.
/// (Kernel nodes, the common case, pass a [`NodeLabel`] instead.)
#[derive(Debug, Default)]
pub struct Label(String);

impl Label {
    pub fn new() -> Self {
        Label(String::with_capacity(32))
    }

    /// `base` followed by `[i]` for each index, outermost first.
    #[inline]
    pub fn indexed(&mut self, base: &str, indices: &[usize]) -> &str {
        self.0.clear();
        push_indexed(&mut self.0, base, indices);
        &self.0
    }
}

/// A kernel node's label as generated builders pass it: a name, or a
/// repeated node's name and its iterations (`step` and `[3, 17]` for
/// `step[3][17]`), which the graph records as they are and spells only
/// when asked (an error, a profile row): formatting and copying the
/// spelled label was a tenth of a repeated kernel node's build.
#[derive(Debug, Clone, Copy)]
pub enum NodeLabel<'l> {
    /// A label as written.
    Plain(&'l str),
    /// A repeated node's name, then its iteration in each enclosing block,
    /// outermost first.
    Indexed(&'static str, &'l [usize]),
}

impl<'l> From<&'l str> for NodeLabel<'l> {
    fn from(label: &'l str) -> Self {
        NodeLabel::Plain(label)
    }
}

impl std::fmt::Display for NodeLabel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodeLabel::Plain(label) => f.write_str(label),
            NodeLabel::Indexed(base, indices) => f.write_str(&spell(base, indices)),
        }
    }
}

/// Spells a label recorded as a name and iterations (see [`NodeLabel`]).
pub(crate) fn spell(base: &str, indices: &[usize]) -> String {
    let mut text = String::with_capacity(base.len() + 4 * indices.len());
    push_indexed(&mut text, base, indices);
    text
}

/// Appends `base` followed by `[i]` for each index, outermost first.
#[inline]
fn push_indexed(out: &mut String, base: &str, indices: &[usize]) {
    out.push_str(base);
    for &i in indices {
        push_index(out, i);
    }
}

/// Appends `[n]`, `n` in decimal: built on the stack and appended at once
/// (a label per repeated node: no formatter, no push per digit).
#[inline]
fn push_index(out: &mut String, mut n: usize) {
    // "[" + up to 20 digits + "]".
    let mut text = [0u8; 22];
    let mut at = text.len() - 1;
    text[at] = b']';
    loop {
        at -= 1;
        text[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    at -= 1;
    text[at] = b'[';
    // SAFETY: `text[at..]` holds only ASCII (brackets and digits written
    // above), which is valid UTF-8. (The checked conversion, a call per
    // index, was a tenth of a repeated kernel node's build.)
    out.push_str(unsafe { std::str::from_utf8_unchecked(&text[at..]) });
}

/// Nodes kept inline before a node list spills to the heap.
const INLINE: usize = 8;

/// Past this many, a dependency list finds repeats through a set.
const SCAN: usize = 32;

/// A list of nodes kept inline up to a few (a repeated block's last nodes,
/// a node's dependencies): most blocks end in one node a lane, and a
/// vector of them was an allocation and a free per block and build.
#[derive(Debug, Clone)]
pub struct NodeList {
    inline: [Node; INLINE],
    len: usize,
    spill: Vec<Node>,
}

impl Default for NodeList {
    fn default() -> Self {
        Self::new()
    }
}

impl NodeList {
    pub const fn new() -> Self {
        NodeList {
            inline: [Node::UNSET; INLINE],
            len: 0,
            spill: Vec::new(),
        }
    }

    #[inline]
    pub fn push(&mut self, node: Node) {
        if self.len < INLINE {
            self.inline[self.len] = node;
        } else {
            if self.len == INLINE {
                self.spill.extend_from_slice(&self.inline);
            }
            self.spill.push(node);
        }
        self.len += 1;
    }

    #[inline]
    pub fn extend_from_slice(&mut self, nodes: &[Node]) {
        for &node in nodes {
            self.push(node);
        }
    }

    /// Empties the list, keeping a spilled list's memory.
    pub fn clear(&mut self) {
        self.len = 0;
        self.spill.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_slice(&self) -> &[Node] {
        if self.len <= INLINE {
            &self.inline[..self.len]
        } else {
            &self.spill
        }
    }
}

impl std::ops::Deref for NodeList {
    type Target = [Node];
    fn deref(&self) -> &[Node] {
        self.as_slice()
    }
}

/// A node's dependencies assembled in one iteration (the nodes before it
/// in this iteration, the earlier iterations' edges, the nodes before the
/// block), with their edge kinds where one is programmatic. Each node is
/// kept once: CUDA refuses a dependency list with repeats, and an empty
/// block passes on the nodes before it, which may be there already.
#[derive(Debug, Default)]
pub struct Deps {
    list: NodeList,
    kinds: Option<Vec<EdgeKind>>,
    seen: Option<std::collections::HashSet<Node>>,
}

impl Deps {
    pub fn new() -> Self {
        Deps {
            list: NodeList::new(),
            kinds: None,
            seen: None,
        }
    }

    /// Whether `node` is in the list already (and, past `SCAN` nodes, notes it).
    fn repeats(&mut self, node: Node) -> bool {
        if let Some(seen) = &mut self.seen {
            return !seen.insert(node);
        }
        if self.as_slice().contains(&node) {
            return true;
        }
        if self.list.len >= SCAN {
            let mut seen: std::collections::HashSet<Node> =
                self.as_slice().iter().copied().collect();
            seen.insert(node);
            self.seen = Some(seen);
        }
        false
    }

    /// A node listed again with an ordinary edge: that edge is full (an
    /// ordinary path to it is the stronger dependency).
    fn make_full(&mut self, node: Node) {
        let at = self.as_slice().iter().position(|n| *n == node);
        if let (Some(kinds), Some(at)) = (&mut self.kinds, at) {
            kinds[at] = EdgeKind::Full;
        }
    }

    #[inline]
    pub fn push(&mut self, node: Node) {
        if self.repeats(node) {
            self.make_full(node);
            return;
        }
        if let Some(kinds) = &mut self.kinds {
            kinds.push(EdgeKind::Full);
        }
        self.list.push(node);
    }

    /// Adds a dependency whose edge has `kind`.
    pub fn push_kind(&mut self, node: Node, kind: EdgeKind) {
        if self.as_slice().contains(&node) {
            return;
        }
        if kind != EdgeKind::Full && self.kinds.is_none() {
            self.kinds = Some(vec![EdgeKind::Full; self.list.len]);
        }
        self.push(node);
        if let Some(last) = self.kinds.as_mut().and_then(|k| k.last_mut()) {
            *last = kind;
        }
    }

    #[inline]
    pub fn extend(&mut self, nodes: &[Node]) {
        for &node in nodes {
            self.push(node);
        }
    }

    pub fn as_slice(&self) -> &[Node] {
        self.list.as_slice()
    }

    /// The edges' kinds, if one is not [`EdgeKind::Full`].
    pub fn edges(&self) -> Option<&[EdgeKind]> {
        self.kinds.as_deref()
    }
}

/// The innermost table of a nested node table (`Vec<Vec<N>>` per nested
/// block), which the iteration being built fills.
#[track_caller]
pub fn last<T>(table: &mut [T]) -> &mut T {
    match table.last_mut() {
        Some(last) => last,
        None => unreachable!("a repeated block pushes its iteration's table first"),
    }
}

/// Makes room for a repeated block's `count` iterations in one of its
/// tables, if the memory is there: a count too large to reserve (`1 << 40`,
/// say) then fails where its nodes are added, with a typed error, instead
/// of aborting the process here.
pub fn reserve<T>(table: &mut Vec<T>, count: usize) {
    let _ = table.try_reserve(count);
}

/// A repeated node's handle from an exec's node table.
///
/// # Panics
/// If an index is out of range, naming the node and its iteration.
#[track_caller]
pub fn node_at<N: Copy>(node: Option<&N>, label: &str, indices: &[usize]) -> N {
    match node {
        Some(node) => *node,
        None => panic!(
            "{} is out of range: the graph has no such iteration",
            Label::new().indexed(label, indices)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_past_the_nodes_a_graph_holds_or_negative_are_refused() {
        let reason = |result: Result<usize>| match result {
            Err(GraphError::InvalidArguments { label, reason }) if label == "chain" => reason,
            other => panic!("{other:?}"),
        };
        let most = crate::node::MAX_NODES;
        assert_eq!(count("chain", 5u8).unwrap(), 5);
        assert_eq!(count("chain", 0i64).unwrap(), 0);
        let past = reason(count("chain", 1u64 << 40));
        assert_eq!(
            past,
            ArgumentRefusal::CountPastMostNodes {
                count: 1 << 40,
                most
            }
        );
        assert_eq!(
            past.to_string(),
            "its count is 1099511627776, more than the 4294967295 nodes a graph holds"
        );
        assert_eq!(
            reason(count("chain", u128::MAX)),
            ArgumentRefusal::CountPastMostNodes {
                count: u128::MAX,
                most
            }
        );
        assert_eq!(
            reason(count("chain", i128::MIN)),
            ArgumentRefusal::NegativeCount { count: i128::MIN }
        );
        assert_eq!(
            reason(count("chain", -1i32)),
            ArgumentRefusal::NegativeCount { count: -1 }
        );
    }

    #[test]
    fn deps_keep_order_and_kinds_past_the_inline_part() {
        let node = |index| Node {
            graph: 1,
            level: 1,
            index,
        };
        let mut deps = Deps::new();
        deps.push(node(0));
        assert!(deps.edges().is_none());
        deps.extend(&(1..9).map(node).collect::<Vec<_>>());
        deps.push_kind(node(9), EdgeKind::Programmatic);
        let indices: Vec<u32> = deps.as_slice().iter().map(|n| n.index).collect();
        assert_eq!(indices, (0..10).collect::<Vec<_>>());
        let kinds = deps.edges().unwrap();
        assert_eq!(kinds.len(), 10);
        assert_eq!(kinds[9], EdgeKind::Programmatic);
        assert!(kinds[..9].iter().all(|k| *k == EdgeKind::Full));
        // Repeats are dropped, before and after the list grows past its scan.
        deps.push(node(3));
        deps.extend(&(0..40).map(node).collect::<Vec<_>>());
        deps.extend(&(0..40).map(node).collect::<Vec<_>>());
        let indices: Vec<u32> = deps.as_slice().iter().map(|n| n.index).collect();
        assert_eq!(indices, (0..40).collect::<Vec<_>>());
    }

    #[test]
    fn a_node_list_spills_past_its_inline_part_and_clears_for_reuse() {
        let node = |index| Node {
            graph: 1,
            level: 1,
            index,
        };
        let indices = |list: &NodeList| list.iter().map(|n| n.index).collect::<Vec<u32>>();
        let mut list = NodeList::new();
        assert!(list.is_empty());
        list.extend_from_slice(&(0..12).map(node).collect::<Vec<_>>());
        list.push(node(7));
        assert_eq!(indices(&list), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 7]);
        // Cleared (as a nested block's list is, lane by lane), it starts
        // inline again, then spills without the earlier entries.
        list.clear();
        assert!(list.is_empty());
        list.extend_from_slice(&(20..23).map(node).collect::<Vec<_>>());
        assert_eq!(indices(&list), [20, 21, 22]);
        list.extend_from_slice(&(23..30).map(node).collect::<Vec<_>>());
        assert_eq!(indices(&list), (20..30).collect::<Vec<_>>());
    }

    #[test]
    fn a_node_listed_again_with_an_ordinary_edge_keeps_a_full_edge() {
        let node = |index| Node {
            graph: 1,
            level: 1,
            index,
        };
        let mut deps = Deps::new();
        deps.push_kind(node(0), EdgeKind::Programmatic);
        deps.push(node(1));
        deps.push(node(0));
        assert_eq!(deps.as_slice().len(), 2);
        assert_eq!(deps.edges().unwrap(), [EdgeKind::Full, EdgeKind::Full]);
    }

    #[test]
    fn labels_and_counts() {
        let mut label = Label::new();
        assert_eq!(label.indexed("step", &[3, 17]), "step[3][17]");
        assert_eq!(label.indexed("x", &[]), "x");
        assert_eq!(
            label.indexed("y", &[0, 9, 10, usize::MAX]),
            format!("y[0][9][10][{}]", usize::MAX)
        );
        assert_eq!(count("lanes", 4u32).unwrap(), 4);
        let error = count("lanes", -1i32).unwrap_err().to_string();
        assert!(error.contains("lanes") && error.contains("-1"), "{error}");
    }

    #[test]
    #[should_panic(expected = "step[2][5] is out of range")]
    fn an_index_out_of_range_names_the_iteration() {
        let table: Vec<Vec<u8>> = vec![vec![1], vec![2], vec![3]];
        node_at(table.get(2).and_then(|t| t.get(5)), "step", &[2, 5]);
    }
}
