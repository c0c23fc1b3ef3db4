//! The checker against a brute-force oracle: random graphs with random
//! reads and writes of a few buffers (parameters and graph allocations),
//! random edges and an `if`/`else` whose bodies hold some of the nodes. The
//! oracle computes reachability by a walk from every node and derives the
//! verdicts the checker must give: data races of copies' and fills' writes,
//! uses before an allocation and after its free, frees not after their
//! alloc. The errors `analyze` reports must be exactly those.
//!
//! CI runs a short pass; the long run (tests/README.md):
//! `PROPTEST_CASES=100000 cargo test --release -p graph-macros-core --test oracle`

use proptest::prelude::*;
#[path = "common/proptest_config.rs"]
mod proptest_config;
use proptest_config::config;
use std::collections::BTreeSet;

const BUFFERS: [&str; 4] = ["p0", "p1", "a0", "a1"];

/// Where a node is: the top graph, or the `if`'s then or else body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Top,
    Then,
    Else,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
    Kernel,
}

#[derive(Debug, Clone)]
enum Op {
    Fill(usize),
    Copy(usize, usize),
    Kernel(Vec<usize>),
}

#[derive(Debug, Clone)]
struct Case {
    ops: Vec<(Op, Level, Option<usize>)>,
    /// Which allocations exist (a0, a1).
    allocs: [bool; 2],
    /// Edges as (from, to) node indices (see `Graph`), from a random order.
    edge_picks: Vec<(usize, usize)>,
    with_if: bool,
    order_seed: Vec<u32>,
}

/// The graph a case describes: its nodes and edges, in a form both the DSL
/// source and the oracle read.
struct Graph {
    names: Vec<String>,
    levels: Vec<Level>,
    /// (node, buffer, access) in statement and operand order.
    touches: Vec<(usize, usize, Access)>,
    /// Per node: `#[disjoint(buffer)]`.
    disjoint: Vec<Option<usize>>,
    edges: Vec<(usize, usize)>,
    /// Alloc and free node of each allocation that exists.
    memory: Vec<(usize, usize, usize)>,
    /// The `if` node, when there is one.
    branch: Option<usize>,
    source: String,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..4usize).prop_map(Op::Fill),
        (0..4usize, 0..4usize).prop_map(|(s, d)| Op::Copy(s, d)),
        prop::collection::vec(0..4usize, 1..3).prop_map(Op::Kernel),
    ]
}

fn level() -> impl Strategy<Value = Level> {
    prop_oneof![4 => Just(Level::Top), 1 => Just(Level::Then), 1 => Just(Level::Else)]
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(
            (op(), level(), prop::option::weighted(0.1, 0..4usize)),
            2..9,
        ),
        any::<[bool; 2]>(),
        prop::collection::vec((0..20usize, 0..20usize), 0..14),
        any::<bool>(),
        prop::collection::vec(any::<u32>(), 20),
    )
        .prop_map(|(ops, allocs, edge_picks, with_if, order_seed)| Case {
            ops,
            allocs,
            edge_picks,
            with_if,
            order_seed,
        })
}

impl Case {
    fn graph(&self) -> Graph {
        let mut names = Vec::new();
        let mut levels = Vec::new();
        let mut disjoint = Vec::new();
        let mut touches = Vec::new();
        let mut memory = Vec::new();
        let exists = |b: usize| b < 2 || self.allocs[b - 2];
        let mut stmts_top = Vec::new();
        let mut stmts_then = Vec::new();
        let mut stmts_else = Vec::new();
        let mut add = |name: String, level: Level, dis: Option<usize>| {
            names.push(name);
            levels.push(level);
            disjoint.push(dis);
            names.len() - 1
        };
        // Nodes in the model's order (the statement order below): the
        // setter and the `if`, its then and else bodies, the allocs, the
        // other nodes of the top graph, the frees.
        let with_if = self.with_if && self.ops.iter().any(|(_, l, _)| *l != Level::Top);
        let (mut set, mut branch) = (None, None);
        if with_if {
            set = Some(add("set".into(), Level::Top, None));
            branch = Some(add("branch".into(), Level::Top, None));
        }
        let mut alloc_nodes = [None; 2];
        for pass in [Level::Then, Level::Else, Level::Top] {
            if pass == Level::Top {
                for (a, node) in alloc_nodes.iter_mut().enumerate() {
                    if self.allocs[a] {
                        *node = Some(add(format!("a{a}"), Level::Top, None));
                        stmts_top.push(format!("a{a}: alloc f32[n];"));
                    }
                }
            }
            for (i, (op, level, dis)) in self.ops.iter().enumerate() {
                let level = if with_if { *level } else { Level::Top };
                if level != pass {
                    continue;
                }
                let operands: Vec<(usize, Access)> = match op {
                    Op::Fill(d) => vec![(*d, Access::Write)],
                    Op::Copy(s, d) => vec![(*s, Access::Read), (*d, Access::Write)],
                    Op::Kernel(args) => args.iter().map(|a| (*a, Access::Kernel)).collect(),
                };
                // Missing allocations become parameters.
                let operands: Vec<(usize, Access)> = operands
                    .into_iter()
                    .map(|(b, a)| (if exists(b) { b } else { b % 2 }, a))
                    .collect();
                let dis = dis.map(|d| operands[d % operands.len()].0);
                let id = add(format!("o{i}"), level, dis);
                for &(b, a) in &operands {
                    touches.push((id, b, a));
                }
                let text: Vec<&str> = operands.iter().map(|(b, _)| BUFFERS[*b]).collect();
                let body = match op {
                    Op::Fill(_) => format!("fill {} = 0.0f32", text[0]),
                    Op::Copy(..) => format!("copy {} => {}", text[0], text[1]),
                    Op::Kernel(_) => format!("kernel k::K<<<1, 32>>>({}, n)", text.join(", ")),
                };
                let attr = dis.map_or(String::new(), |b| format!("#[disjoint({})] ", BUFFERS[b]));
                let stmt = format!("{attr}o{i}: {body};");
                match level {
                    Level::Top => stmts_top.push(stmt),
                    Level::Then => stmts_then.push(stmt),
                    Level::Else => stmts_else.push(stmt),
                }
            }
        }
        for (a, alloc) in alloc_nodes.iter().enumerate() {
            if let Some(alloc) = *alloc {
                let free = add(format!("f{a}"), Level::Top, None);
                stmts_top.push(format!("f{a}: free a{a};"));
                memory.push((a + 2, alloc, free));
            }
        }
        // Edges: between nodes of one level, in a random order of them.
        let n = names.len();
        let mut rank: Vec<usize> = (0..n).collect();
        rank.sort_by_key(|&v| {
            self.order_seed[v % self.order_seed.len()].wrapping_mul(v as u32 + 1)
        });
        let mut position = vec![0; n];
        for (p, &v) in rank.iter().enumerate() {
            position[v] = p;
        }
        if let Some(s) = set {
            // The setter first: its edge to the `if` must not close a cycle.
            position.iter_mut().for_each(|p| *p += 1);
            position[s] = 0;
        }
        let mut edges = BTreeSet::new();
        for &(x, y) in &self.edge_picks {
            let (u, v) = (x % n, y % n);
            if u == v || levels[u] != levels[v] {
                continue;
            }
            let (u, v) = if position[u] < position[v] {
                (u, v)
            } else {
                (v, u)
            };
            edges.insert((u, v));
        }
        if let (Some(s), Some(b)) = (set, branch) {
            edges.insert((s, b));
        }
        let edges: Vec<(usize, usize)> = edges.into_iter().collect();
        let mut edge_stmts = [Vec::new(), Vec::new(), Vec::new()];
        for &(u, v) in &edges {
            let slot = match levels[u] {
                Level::Top => 0,
                Level::Then => 1,
                Level::Else => 2,
            };
            edge_stmts[slot].push(format!("{} -> {};", names[u], names[v]));
        }
        let mut source =
            String::from("graph G(p0: &mut CudaSlice<f32>, p1: &mut CudaSlice<f32>, n: u32) {\n");
        if with_if {
            source.push_str("cond h;\nset: kernel k::S<<<1, 1>>>(h);\n");
            source.push_str(&format!(
                "branch: if h {{ {} {} }} else {{ {} {} }}\n",
                stmts_then.join(" "),
                edge_stmts[1].join(" "),
                stmts_else.join(" "),
                edge_stmts[2].join(" ")
            ));
        }
        for s in stmts_top.iter().chain(&edge_stmts[0]) {
            source.push_str(s);
            source.push('\n');
        }
        source.push('}');
        Graph {
            names,
            levels,
            touches,
            disjoint,
            edges,
            memory,
            branch,
            source,
        }
    }
}

impl Graph {
    /// reach[u][v]: a path of edges from u to v (u itself included).
    fn reach(&self) -> Vec<Vec<bool>> {
        let n = self.names.len();
        let mut reach = vec![vec![false; n]; n];
        for (start, row) in reach.iter_mut().enumerate() {
            let mut stack = vec![start];
            while let Some(v) = stack.pop() {
                if std::mem::replace(&mut row[v], true) {
                    continue;
                }
                stack.extend(self.edges.iter().filter(|e| e.0 == v).map(|e| e.1));
            }
        }
        reach
    }

    /// The node of the top graph that is `v` or holds it.
    fn top(&self, v: usize) -> usize {
        match self.levels[v] {
            Level::Top => v,
            _ => self.branch.expect("a body node has its if"),
        }
    }

    /// Whether u and v may run at the same time.
    fn unordered(&self, reach: &[Vec<bool>], u: usize, v: usize) -> bool {
        if self.levels[u] != Level::Top && self.levels[v] != Level::Top {
            if self.levels[u] != self.levels[v] {
                return false; // then and else: never both
            }
            return !reach[u][v] && !reach[v][u];
        }
        let (u, v) = (self.top(u), self.top(v));
        u != v && !reach[u][v] && !reach[v][u]
    }

    fn expected(&self) -> BTreeSet<String> {
        let reach = self.reach();
        let mut out = BTreeSet::new();
        let live: Vec<usize> = (0..self.touches.len())
            .filter(|&t| {
                let (node, buffer, _) = self.touches[t];
                self.disjoint[node] != Some(buffer)
            })
            .collect();
        for &t in &live {
            let (node, buffer, access) = self.touches[t];
            if access != Access::Write {
                continue;
            }
            let races = live.iter().any(|&o| {
                let (other, b, a) = self.touches[o];
                b == buffer
                    && other != node
                    && !(a == Access::Write && o < t)
                    && self.unordered(&reach, node, other)
            });
            if races {
                out.insert(format!("race {} {}", BUFFERS[buffer], self.names[node]));
            }
        }
        for &(buffer, alloc, free) in &self.memory {
            let misplaced = !reach[alloc][free];
            if misplaced {
                out.insert(format!("free {}", self.names[free]));
            }
            let users: BTreeSet<usize> = self
                .touches
                .iter()
                .filter(|t| t.1 == buffer)
                .map(|t| t.0)
                .collect();
            for node in users {
                let user = self.top(node);
                if !reach[alloc][user] {
                    out.insert(format!("before {} {}", BUFFERS[buffer], self.names[node]));
                } else if !misplaced && !reach[user][free] {
                    out.insert(format!("after {} {}", BUFFERS[buffer], self.names[node]));
                }
            }
        }
        out
    }
}

/// The checker's errors in the oracle's terms; any other error is kept
/// whole (and fails the comparison).
fn reported(source: &str) -> BTreeSet<String> {
    let tokens: proc_macro2::TokenStream = source.parse().expect("generated source tokenizes");
    let Err(errors) = graph_macros_core::analyze(tokens) else {
        return BTreeSet::new();
    };
    let ticked = |m: &str, i: usize| m.split('`').nth(i).unwrap_or("").to_string();
    errors
        .into_iter()
        .map(|e| {
            let m = e.to_string();
            if m.starts_with("data race on") {
                format!("race {} {}", ticked(&m, 1), ticked(&m, 3))
            } else if m.contains("before it is allocated") {
                format!("before {} {}", ticked(&m, 1), ticked(&m, 3))
            } else if m.contains("after it may be freed") {
                format!("after {} {}", ticked(&m, 1), ticked(&m, 3))
            } else if m.contains("is not ordered after its alloc node") {
                format!("free {}", ticked(&m, 1))
            } else {
                m
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_checker_agrees_with_brute_force_reachability(case in case()) {
        let graph = case.graph();
        let expected = graph.expected();
        let got = reported(&graph.source);
        prop_assert_eq!(&got, &expected, "source:\n{}", graph.source);
    }
}

/// The oracle itself, on a hand-made graph: two fills of `p0` unordered,
/// then ordered.
#[test]
fn the_oracle_sees_a_race_and_its_fix() {
    let race = Case {
        ops: vec![
            (Op::Fill(0), Level::Top, None),
            (Op::Fill(0), Level::Top, None),
        ],
        allocs: [false, false],
        edge_picks: vec![],
        with_if: false,
        order_seed: vec![1; 20],
    };
    let graph = race.graph();
    assert_eq!(graph.expected(), BTreeSet::from(["race p0 o0".to_string()]));
    assert_eq!(reported(&graph.source), graph.expected());
    let fixed = Case {
        edge_picks: vec![(0, 1)],
        ..race
    };
    let graph = fixed.graph();
    assert!(graph.expected().is_empty(), "{:?}", graph.expected());
    assert!(reported(&graph.source).is_empty());
}

/// The generator reaches every verdict (the comparison is not vacuous):
/// among 2,000 cases, some have each kind of error, some none, and some
/// an `if` with both bodies.
#[test]
fn the_generated_graphs_cover_every_verdict() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut seen = std::collections::BTreeMap::<&str, usize>::new();
    for _ in 0..2_000 {
        let graph = case().new_tree(&mut runner).unwrap().current().graph();
        let expected = graph.expected();
        for kind in ["race", "before", "after", "free"] {
            if expected.iter().any(|e| e.starts_with(kind)) {
                *seen.entry(kind).or_default() += 1;
            }
        }
        if expected.is_empty() {
            *seen.entry("clean").or_default() += 1;
        }
        if graph.levels.contains(&Level::Then) && graph.levels.contains(&Level::Else) {
            *seen.entry("both bodies").or_default() += 1;
        }
        if graph.disjoint.iter().any(Option::is_some) {
            *seen.entry("disjoint").or_default() += 1;
        }
    }
    eprintln!("verdicts over 2,000 cases: {seen:?}");
    for kind in [
        "race",
        "before",
        "after",
        "free",
        "clean",
        "both bodies",
        "disjoint",
    ] {
        assert!(
            seen.get(kind).copied().unwrap_or(0) >= 20,
            "{kind}: {seen:?}"
        );
    }
}
