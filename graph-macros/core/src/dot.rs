//! Graphviz DOT text of a checked graph: conditional bodies and repeated
//! blocks become clusters (a block's start and end are points, its edges
//! between iterations dashed and labelled `i-1`), programmatic edges are
//! dashed, scope-implied edges dotted.

use crate::model::{Kind, LevelId, Model, Origin, RepeatId};
use crate::parse::EdgeKind;
use std::fmt::Write;

pub fn render(model: &Model<'_>) -> String {
    let name = model
        .def
        .name
        .as_ref()
        .map_or_else(|| "graph".to_string(), ToString::to_string);
    let mut out = String::new();
    let _ = writeln!(out, "digraph {} {{", quote(&name));
    out.push_str("  node [shape=box, fontname=\"monospace\"];\n");
    render_level(model, crate::model::TOP, 1, &mut out);
    out.push_str("}\n");
    out
}

fn render_level(model: &Model<'_>, level: LevelId, depth: usize, out: &mut String) {
    let indent = "  ".repeat(depth);
    render_members(model, level, None, depth, out);
    for repeat in model.repeats.iter().filter(|r| r.level == level) {
        for carried in &repeat.carried {
            let _ = writeln!(
                out,
                "{indent}{} -> {} [style=dashed, constraint=false, label={}];",
                quote(&model.nodes[carried.from].name),
                quote(&model.nodes[carried.to].name),
                quote(&format!("{}-{}", repeat.syntax.var, carried.back))
            );
        }
    }
    render_edges(model, level, &indent, out);
}

/// The nodes of `level` directly in repeated block `within` (or in none),
/// nested blocks as clusters.
fn render_members(
    model: &Model<'_>,
    level: LevelId,
    within: Option<RepeatId>,
    depth: usize,
    out: &mut String,
) {
    let indent = "  ".repeat(depth);
    for &id in &model.levels[level].nodes {
        let node = &model.nodes[id];
        if node.repeat != within || matches!(node.origin, Origin::RepeatEnd(_)) {
            continue;
        }
        if let Origin::RepeatStart(block) = node.origin {
            let repeat = &model.repeats[block];
            let syntax = repeat.syntax;
            let count = quote::ToTokens::to_token_stream(&syntax.count).to_string();
            let _ = writeln!(
                out,
                "{indent}subgraph {} {{",
                quote(&format!("cluster_{}", node.name))
            );
            let title = format!("{}: for {} in 0..{count}", syntax.label, syntax.var);
            let _ = writeln!(out, "{indent}  label={}; style=rounded;", quote(&title));
            for end in [repeat.start, repeat.end] {
                let _ = writeln!(
                    out,
                    "{indent}  {} [shape=point];",
                    quote(&model.nodes[end].name)
                );
            }
            render_members(model, level, Some(block), depth + 1, out);
            let _ = writeln!(out, "{indent}}}");
            continue;
        }
        if matches!(node.origin, Origin::PlaceStart(_) | Origin::PlaceEnd(_)) {
            // A placed fragment's start and end: points its nodes hang from.
            let _ = writeln!(out, "{indent}{} [shape=point];", quote(&node.name));
            continue;
        }
        let shape = match node.kind() {
            Kind::If | Kind::While | Kind::Switch => ", shape=diamond",
            Kind::Alloc | Kind::Free => ", shape=cylinder",
            Kind::Host => ", shape=oval",
            _ => "",
        };
        let _ = writeln!(
            out,
            "{indent}{} [label={}{shape}];",
            quote(&node.name),
            Label(&node.name, node.kind().keyword())
        );
        for (arm, &body) in node.bodies.iter().enumerate() {
            let _ = writeln!(
                out,
                "{indent}subgraph {} {{",
                quote(&format!("cluster_{}_{arm}", node.name))
            );
            let title = match node.kind() {
                Kind::If if arm == 0 => format!("{} then", node.name),
                Kind::If => format!("{} else", node.name),
                Kind::Switch => format!("{} case {arm}", node.name),
                _ => format!("{} body", node.name),
            };
            let _ = writeln!(out, "{indent}  label={};", quote(&title));
            render_level(model, body, depth + 1, out);
            let _ = writeln!(out, "{indent}}}");
        }
    }
}

fn render_edges(model: &Model<'_>, level: LevelId, indent: &str, out: &mut String) {
    for edge in &model.levels[level].edges {
        let style = match (edge.kind, edge.tokens.is_some()) {
            (EdgeKind::Programmatic, _) => " [style=dashed, label=\"programmatic\"]",
            (EdgeKind::LaunchOrder, _) => " [style=dashed, label=\"launch_order\"]",
            (EdgeKind::Full, false) => " [style=dotted]",
            (EdgeKind::Full, true) => "",
        };
        let _ = writeln!(
            out,
            "{indent}{} -> {}{style};",
            quote(&model.nodes[edge.from].name),
            quote(&model.nodes[edge.to].name)
        );
    }
}

/// `text` as a DOT string; a `\n` in it stays DOT's line break. Names
/// are identifiers, so the escaping pass is seldom needed (and was a
/// twentieth of the macro's time at 10,000 nodes). Written in place (a
/// `Display`): a string per name and edge was an allocation each.
struct Quoted<'t>(&'t str);

impl std::fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = self.0;
        if !text.contains(['\\', '"']) {
            return write!(f, "\"{text}\"");
        }
        let escaped = text.replace('\\', "\\\\").replace('"', "\\\"");
        write!(f, "\"{}\"", escaped.replace("\\\\n", "\\n"))
    }
}

/// [`Quoted`], for text made on the spot.
fn quote(text: &str) -> Quoted<'_> {
    Quoted(text)
}

/// A node's DOT label: its name over its kind, on two lines.
struct Label<'t>(&'t str, &'t str);

impl std::fmt::Display for Label<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Label(name, kind) = *self;
        if name.contains(['\\', '"']) {
            return write!(f, "{}", quote(&format!("{name}\\n{kind}")));
        }
        write!(f, "\"{name}\\n{kind}\"")
    }
}
