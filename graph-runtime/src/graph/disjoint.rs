//! A repeated block's `#[disjoint(..)]` claim, checked when the graph is
//! built. The macro takes the claim on trust at compile time (it cannot
//! know what `x.slice(w * 32..)` spans for each `w`); once the block is
//! built, the parts each iteration was given are known: two iterations of
//! a block whose iterations nothing orders whose parts share one byte,
//! one of them writing, race, and the build is refused naming both nodes.
//! Only parts (`Buf::slice`) are compared: a whole buffer passed to each
//! iteration with an index (`mark(visits, w)`) touches what the kernel
//! makes of the index, which stays on trust.
//!
//! Cheap on the common path: one pass over the block's recorded spans
//! makes each iteration's hulls (of the parts it reads, and of those it
//! writes); only hulls that overlap send the check through every span.

use super::built_uses::BuiltUses;
use super::*;

/// A span (or an iteration's hull of spans) of the sweep: bytes, whether
/// it is written, the iteration, and the node it is of.
#[derive(Debug, Clone, Copy)]
struct Span {
    bytes: (u64, u64),
    write: bool,
    iteration: usize,
    node: u32,
}

impl Graph<'_> {
    /// What a generated builder calls after a repeated block claimed
    /// `#[disjoint]` and not ordered by edges between its iterations:
    /// `starts` holds the index of each iteration's first node, then the
    /// index past the block's last.
    ///
    /// # Errors
    /// [`GraphError::Unordered`] naming a node of one iteration, the node
    /// of another that touches its memory, and the block.
    #[doc(hidden)]
    pub fn __check_disjoint(&self, block: &str, starts: &[u32]) -> Result<()> {
        let registry = self.registry();
        match overlap_between_iterations(&registry.built_uses, starts) {
            None => Ok(()),
            Some((a, b)) => Err(GraphError::unordered(
                &registry.label(a as usize),
                OrderRule::DisjointIterationsOverlap {
                    other: registry.label(b as usize).to_string(),
                    block: block.to_string(),
                },
            )),
        }
    }
}

/// Two nodes of different iterations (their starts in `starts`) whose
/// spans overlap, one of them writing, if there are any.
fn overlap_between_iterations(built: &BuiltUses, starts: &[u32]) -> Option<(u32, u32)> {
    // Fewer than two iterations overlap no other.
    let iterations = starts.len().checked_sub(1).filter(|&n| n >= 2)?;
    let uses = built.of_nodes(starts[0], starts[iterations]);
    if !uses.iter().any(|u| u.part) {
        return None;
    }
    // Each iteration's hulls, of the parts it reads and of those it writes
    // (empty while start >= end). One tight pass: this is the cost every
    // build of a `#[disjoint]` block pays.
    const EMPTY: (u64, u64) = (u64::MAX, 0);
    let mut hulls: Vec<[(u64, u64); 2]> = vec![[EMPTY; 2]; iterations];
    let (mut k, mut next) = (0, starts[1]);
    for u in uses {
        while u.node >= next && k + 1 < iterations {
            k += 1;
            next = starts[k + 1];
        }
        if u.part && u.bytes.0 < u.bytes.1 {
            let hull = &mut hulls[k][usize::from(u.write)];
            *hull = (hull.0.min(u.bytes.0), hull.1.max(u.bytes.1));
        }
    }
    let mut hull_spans: Vec<Span> = Vec::with_capacity(2 * iterations);
    for (iteration, pair) in hulls.into_iter().enumerate() {
        for (bytes, write) in pair.into_iter().zip([false, true]) {
            if bytes.0 < bytes.1 {
                let node = 0;
                hull_spans.push(Span {
                    bytes,
                    write,
                    iteration,
                    node,
                });
            }
        }
    }
    first_overlap(&mut hull_spans)?;
    // Hulls overlap: every span, with its node.
    let mut spans: Vec<Span> = Vec::new();
    let mut k = 0;
    for u in uses {
        while k + 1 < iterations && u.node >= starts[k + 1] {
            k += 1;
        }
        if u.part && u.bytes.0 < u.bytes.1 {
            let (bytes, write, iteration, node) = (u.bytes, u.write, k, u.node);
            spans.push(Span {
                bytes,
                write,
                iteration,
                node,
            });
        }
    }
    first_overlap(&mut spans)
}

/// The first pair of spans of different iterations that overlap, one of
/// them written, in a sweep by start: each span is checked against the
/// furthest-reaching earlier span of another iteration (and of another
/// iteration's writes), kept as the two furthest of distinct iterations.
fn first_overlap(spans: &mut [Span]) -> Option<(u32, u32)> {
    spans.sort_unstable_by_key(|s| s.bytes.0);
    let (mut any, mut written): ([Option<Span>; 2], [Option<Span>; 2]) = ([None; 2], [None; 2]);
    for s in spans.iter() {
        let against = if s.write { &any } else { &written };
        if let Some(other) = against
            .iter()
            .flatten()
            .find(|o| o.iteration != s.iteration && o.bytes.1 > s.bytes.0)
        {
            return Some((other.node, s.node));
        }
        keep_furthest(&mut any, *s);
        if s.write {
            keep_furthest(&mut written, *s);
        }
    }
    None
}

/// Keeps in `top` the furthest-reaching spans of two distinct iterations.
fn keep_furthest(top: &mut [Option<Span>; 2], s: Span) {
    match top
        .iter()
        .position(|t| t.is_some_and(|t| t.iteration == s.iteration))
    {
        Some(i) => {
            let t = top[i].as_mut().map(|t| t.bytes.1 < s.bytes.1);
            if t == Some(true) {
                top[i] = Some(s);
            }
        }
        None => {
            if top[1].is_none_or(|t| t.bytes.1 < s.bytes.1) {
                top[1] = Some(s);
            }
        }
    }
    if top[1].is_some_and(|b| top[0].is_none_or(|a| a.bytes.1 < b.bytes.1)) {
        top.swap(0, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::BufferUse;

    /// Parts (`Buf::slice`) of nodes: (node, bytes, written).
    fn recorded(nodes: &[(u32, (u64, u64), bool)]) -> BuiltUses {
        whole_or_parts(nodes, true)
    }

    fn whole_or_parts(nodes: &[(u32, (u64, u64), bool)], part: bool) -> BuiltUses {
        let mut built = BuiltUses::default();
        built.mark_checked();
        for &(node, bytes, write) in nodes {
            built.record(
                node,
                &[BufferUse {
                    root: 1,
                    alloc: None,
                    write,
                    writable: true,
                    bytes,
                    part,
                }],
            );
        }
        built
    }

    #[test]
    fn iterations_may_touch_their_own_parts_and_read_the_same_bytes() {
        // Three lanes of two nodes each, on their own 32 bytes, all reading
        // one shared table.
        let mut nodes = Vec::new();
        for lane in 0..3u32 {
            let part = (u64::from(lane) * 32, u64::from(lane) * 32 + 32);
            nodes.push((lane * 2, part, true));
            nodes.push((lane * 2 + 1, part, true));
            nodes.push((lane * 2 + 1, (1000, 2000), false));
        }
        let built = recorded(&nodes);
        assert_eq!(overlap_between_iterations(&built, &[0, 2, 4, 6]), None);
        // An empty block, and an iteration of no nodes.
        assert_eq!(overlap_between_iterations(&built, &[6]), None);
        assert_eq!(overlap_between_iterations(&built, &[0, 2, 2, 6]), None);
    }

    #[test]
    fn a_write_into_another_iteration_s_part_is_found_by_its_nodes() {
        // Lane 1's two nodes overlap each other (one iteration: ordered
        // or not, the macro checked them), and the second writes one byte
        // into the part lane 2 reads.
        let built = recorded(&[
            (0, (0, 32), true),
            (1, (32, 64), true),
            (2, (32, 65), true),
            (3, (64, 96), false),
        ]);
        let found = overlap_between_iterations(&built, &[0, 1, 3, 4]);
        assert!(matches!(found, Some((2, 3)) | Some((3, 2))), "{found:?}");
        // Without that byte, the lanes are apart.
        let apart = recorded(&[
            (0, (0, 32), true),
            (1, (32, 64), true),
            (2, (32, 64), true),
            (3, (64, 96), false),
        ]);
        assert_eq!(overlap_between_iterations(&apart, &[0, 1, 3, 4]), None);
        // A read of another lane's written part races too.
        let read = recorded(&[(0, (0, 32), true), (1, (16, 48), false)]);
        assert!(overlap_between_iterations(&read, &[0, 1, 2]).is_some());
        // Whole buffers, each lane indexing into it, stay on trust.
        let whole = whole_or_parts(&[(0, (0, 32), true), (1, (0, 32), true)], false);
        assert_eq!(overlap_between_iterations(&whole, &[0, 1, 2]), None);
    }
}
