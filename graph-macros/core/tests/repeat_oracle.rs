//! The repetition checker against a brute-force oracle. A random repeated
//! block: a few fills and copies of two buffers, random edges inside one
//! iteration and random edges between iterations (one or two back), with
//! an empty node before the block and one after it. The checker reasons on
//! the body once; the oracle unrolls the block (4 iterations: every pair of
//! iterations one and two apart appears) and walks the unrolled graph from
//! every node. The buffers reported as raced must be exactly those with two
//! unordered unrolled accesses, one writing.
//!
//! CI runs a short pass; the long run:
//! `PROPTEST_CASES=100000 cargo test --release -p graph-macros-core --test repeat_oracle`

use proptest::prelude::*;
#[path = "common/proptest_config.rs"]
mod proptest_config;
use proptest_config::config;
use std::collections::BTreeSet;

const BUFFERS: [&str; 2] = ["x", "y"];
const UNROLLED: usize = 4;

#[derive(Debug, Clone)]
enum Op {
    Fill(usize),
    Copy(usize, usize),
    Empty,
}

#[derive(Debug, Clone)]
struct Case {
    ops: Vec<Op>,
    /// Edges inside one iteration, as (from, to) picks (made forward).
    inner: Vec<(usize, usize)>,
    /// Edges between iterations: (from, to, back).
    carried: Vec<(usize, usize, usize)>,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..2usize).prop_map(Op::Fill),
        (0..2usize, 0..2usize).prop_map(|(s, d)| Op::Copy(s, d)),
        Just(Op::Empty),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(op(), 1..6),
        prop::collection::vec((0..6usize, 0..6usize), 0..6),
        prop::collection::vec((0..6usize, 0..6usize, 1..3usize), 0..4),
    )
        .prop_map(|(ops, inner, carried)| Case {
            ops,
            inner,
            carried,
        })
}

impl Case {
    /// Edges inside one iteration: forward by index, deduplicated.
    fn inner_edges(&self) -> BTreeSet<(usize, usize)> {
        let n = self.ops.len();
        self.inner
            .iter()
            .map(|&(a, b)| (a % n, b % n))
            .filter(|(a, b)| a != b)
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect()
    }

    fn carried_edges(&self) -> BTreeSet<(usize, usize, usize)> {
        let n = self.ops.len();
        self.carried
            .iter()
            .map(|&(a, b, k)| (a % n, b % n, k))
            .collect()
    }

    fn source(&self) -> String {
        let mut body = String::new();
        for (i, op) in self.ops.iter().enumerate() {
            body.push_str(&match op {
                Op::Fill(b) => format!("n{i}: fill {} = 0.0f32;\n", BUFFERS[*b]),
                Op::Copy(s, d) => format!("n{i}: copy {} => {};\n", BUFFERS[*s], BUFFERS[*d]),
                Op::Empty => format!("n{i}: empty;\n"),
            });
        }
        for (a, b) in self.inner_edges() {
            body.push_str(&format!("n{a} -> n{b};\n"));
        }
        for (a, b, k) in self.carried_edges() {
            body.push_str(&format!("n{a}[i-{k}] -> n{b};\n"));
        }
        format!(
            "graph G(x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>, count: usize) {{
                before: empty;
                block: for i in 0..count {{ {body} }}
                after: empty;
                before -> block -> after;
            }}"
        )
    }

    /// The buffers two unordered unrolled accesses race on.
    fn expected(&self) -> BTreeSet<String> {
        let n = self.ops.len();
        let id = |iteration: usize, node: usize| iteration * n + node;
        let total = UNROLLED * n;
        let mut successors = vec![Vec::new(); total];
        for it in 0..UNROLLED {
            for (a, b) in self.inner_edges() {
                successors[id(it, a)].push(id(it, b));
            }
            for (a, b, k) in self.carried_edges() {
                if it >= k {
                    successors[id(it - k, a)].push(id(it, b));
                }
            }
        }
        let reach: Vec<Vec<bool>> = (0..total)
            .map(|from| {
                let mut seen = vec![false; total];
                let mut stack = vec![from];
                while let Some(v) = stack.pop() {
                    for &s in &successors[v] {
                        if !seen[s] {
                            seen[s] = true;
                            stack.push(s);
                        }
                    }
                }
                seen
            })
            .collect();
        // (unrolled node, buffer, writes)
        let mut touches = Vec::new();
        for it in 0..UNROLLED {
            for (i, op) in self.ops.iter().enumerate() {
                match op {
                    Op::Fill(b) => touches.push((id(it, i), *b, true)),
                    Op::Copy(s, d) => {
                        touches.push((id(it, i), *s, false));
                        touches.push((id(it, i), *d, true));
                    }
                    Op::Empty => {}
                }
            }
        }
        let mut raced = BTreeSet::new();
        for &(u, bu, wu) in &touches {
            for &(v, bv, wv) in &touches {
                if u < v && bu == bv && (wu || wv) && !reach[u][v] && !reach[v][u] {
                    raced.insert(BUFFERS[bu].to_string());
                }
            }
        }
        raced
    }
}

/// The buffers the checker reports a data race on; panics on any other error.
fn reported(source: &str) -> BTreeSet<String> {
    let tokens: proc_macro2::TokenStream = source.parse().expect("generated source tokenizes");
    let Err(errors) = graph_macros_core::analyze(tokens) else {
        return BTreeSet::new();
    };
    errors
        .into_iter()
        .map(|e| {
            let text = e.to_string();
            let rest = text
                .strip_prefix("data race on `")
                .unwrap_or_else(|| panic!("not a race: {text}\nsource:\n{source}"));
            rest.split('`').next().unwrap_or_default().to_string()
        })
        .collect()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_folded_checker_agrees_with_the_unrolled_graph(case in case()) {
        let source = case.source();
        prop_assert_eq!(reported(&source), case.expected(), "source:\n{}", source);
    }
}

/// The oracle itself: one fill per iteration races unless chained.
#[test]
fn the_oracle_sees_iterations_race() {
    let racing = Case {
        ops: vec![Op::Fill(0)],
        inner: vec![],
        carried: vec![],
    };
    assert_eq!(racing.expected(), BTreeSet::from(["x".to_string()]));
    let chained = Case {
        ops: vec![Op::Fill(0)],
        inner: vec![],
        carried: vec![(0, 0, 1)],
    };
    assert!(chained.expected().is_empty());
    let every_other = Case {
        ops: vec![Op::Fill(0)],
        inner: vec![],
        carried: vec![(0, 0, 2)],
    };
    assert_eq!(every_other.expected(), BTreeSet::from(["x".to_string()]));
}
