//! A profile's derived views: timeline lanes, the critical path, a text
//! table (`Display`) and an SVG timeline.

use super::{NodeTime, Profile};
use crate::node::NodeKind;
use std::fmt::{self, Write as _};

/// Two times closer than this (ms) count as equal: an event's resolution
/// is about half a microsecond.
const SLACK_MS: f64 = 1e-3;

/// Makes each node start no earlier than its dependencies end. The two
/// records around a node are nodes of their own, which the driver runs a
/// few microseconds apart: a dependent's start record can come before its
/// dependency's end record (seen on the H200: 5 us). The gap is counted
/// in the dependency. Nodes are in the order they were added, so a node's
/// dependencies come before it.
pub(super) fn order_times(nodes: &mut [NodeTime]) {
    for i in 0..nodes.len() {
        let ready = nodes[i]
            .deps
            .iter()
            .map(|&d| nodes[d].end_ms)
            .fold(nodes[i].start_ms, f64::max);
        nodes[i].start_ms = ready;
        nodes[i].end_ms = nodes[i].end_ms.max(ready);
    }
}

/// Puts each node in the first lane whose last node ended by its start.
pub(super) fn assign_lanes(nodes: &mut [NodeTime]) {
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by(|&a, &b| {
        nodes[a]
            .start_ms
            .total_cmp(&nodes[b].start_ms)
            .then(nodes[a].end_ms.total_cmp(&nodes[b].end_ms))
    });
    let mut lane_ends: Vec<f64> = Vec::new();
    for i in order {
        let start = nodes[i].start_ms;
        let lane = match lane_ends.iter().position(|&end| end <= start + SLACK_MS) {
            Some(lane) => lane,
            None => {
                lane_ends.push(f64::NEG_INFINITY);
                lane_ends.len() - 1
            }
        };
        lane_ends[lane] = nodes[i].end_ms;
        nodes[i].lane = lane;
    }
}

/// From the node that ended last back through the dependency that ended
/// last, first to last.
pub(super) fn critical_path(nodes: &[NodeTime]) -> Vec<usize> {
    let latest = |candidates: &mut dyn Iterator<Item = usize>| {
        candidates.max_by(|&a, &b| nodes[a].end_ms.total_cmp(&nodes[b].end_ms))
    };
    let mut path = Vec::new();
    let mut at = latest(&mut (0..nodes.len()));
    while let Some(i) = at {
        path.push(i);
        at = latest(&mut nodes[i].deps.iter().copied());
    }
    path.reverse();
    path
}

fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Kernel => "kernel",
        NodeKind::Memcpy => "copy",
        NodeKind::Memset => "fill",
        NodeKind::Host => "host",
        NodeKind::Empty => "empty",
        NodeKind::ChildGraph => "graph",
        NodeKind::EventRecord => "record",
        NodeKind::EventWait => "wait",
        NodeKind::MemAlloc => "alloc",
        NodeKind::MemFree => "free",
        NodeKind::Conditional => "conditional",
    }
}

fn kind_color(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Kernel => "#4e79a7",
        NodeKind::Memcpy => "#f28e2b",
        NodeKind::Memset => "#59a14f",
        NodeKind::Host => "#e15759",
        NodeKind::ChildGraph => "#76b7b2",
        NodeKind::Conditional => "#b07aa1",
        NodeKind::MemAlloc | NodeKind::MemFree => "#edc948",
        _ => "#bab0ac",
    }
}

impl Profile {
    /// The critical path's labels joined by ` -> `.
    fn critical_labels(&self) -> String {
        let labels: Vec<&str> = self
            .critical_path()
            .iter()
            .map(|&i| self.nodes[i].label.as_str())
            .collect();
        labels.join(" -> ")
    }

    /// The timeline as an SVG picture: one row per lane, a bar per node
    /// (colored by kind, outlined when on the critical path, its times in
    /// a tooltip), a millisecond axis, and the critical path below.
    pub fn svg(&self) -> String {
        const LEFT: f64 = 64.0;
        const WIDTH: f64 = 900.0;
        const TOP: f64 = 36.0;
        const ROW: f64 = 28.0;
        let span = self
            .nodes
            .iter()
            .map(|n| n.end_ms)
            .fold(self.device_ms, f64::max)
            .max(SLACK_MS);
        let scale = WIDTH / span;
        let lanes = self.lanes().max(1) as f64;
        let height = TOP + lanes * ROW + 40.0;
        let mut svg = String::new();
        let _ = writeln!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{height}" viewBox="0 0 {w} {height}" font-family="monospace" font-size="11">"#,
            w = LEFT + WIDTH + 20.0,
        );
        let _ = writeln!(
            svg,
            r##"<rect width="100%" height="100%" fill="#ffffff"/>"##
        );
        // The axis: about eight ticks at 1, 2 or 5 times a power of ten.
        let raw_step = span / 8.0;
        let magnitude = 10f64.powf(raw_step.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * magnitude)
            .find(|s| *s >= raw_step)
            .unwrap_or(raw_step);
        let mut tick = 0.0;
        while tick <= span + SLACK_MS {
            let x = LEFT + tick * scale;
            let _ = writeln!(
                svg,
                r##"<line x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{y1}" stroke="#dddddd"/><text x="{x:.1}" y="{ty}" text-anchor="middle">{tick}</text>"##,
                y0 = TOP - 6.0,
                y1 = TOP + lanes * ROW,
                ty = TOP - 10.0,
                tick = format_ms(tick),
            );
            tick += step;
        }
        let _ = writeln!(
            svg,
            r#"<text x="{LEFT}" y="14">ms after launch; device time {:.3} ms</text>"#,
            self.device_ms
        );
        for lane in 0..self.lanes() {
            let _ = writeln!(
                svg,
                r#"<text x="4" y="{:.1}">lane {lane}</text>"#,
                TOP + lane as f64 * ROW + ROW / 2.0 + 4.0
            );
        }
        for (i, node) in self.nodes.iter().enumerate() {
            let x = LEFT + node.start_ms * scale;
            let w = (node.duration_ms() * scale).max(1.0);
            let y = TOP + node.lane as f64 * ROW + 3.0;
            let critical = self.critical.contains(&i);
            let stroke = if critical {
                r##" stroke="#000000" stroke-width="2""##
            } else {
                ""
            };
            let label = escape(&node.label);
            let _ = writeln!(
                svg,
                r#"<g><title>{label} ({kind}): {start:.3} to {end:.3} ms, {dur:.3} ms{crit}</title><rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h}" fill="{fill}"{stroke}/>"#,
                kind = kind_name(node.kind),
                start = node.start_ms,
                end = node.end_ms,
                dur = node.duration_ms(),
                crit = if critical { ", critical path" } else { "" },
                h = ROW - 6.0,
                fill = kind_color(node.kind),
            );
            // The label where it fits (about 7 px per character).
            if w >= 7.0 * node.label.chars().count() as f64 + 6.0 {
                let _ = writeln!(
                    svg,
                    r##"<text x="{:.1}" y="{:.1}" fill="#ffffff">{label}</text>"##,
                    x + 3.0,
                    y + ROW / 2.0 + 1.0
                );
            }
            let _ = writeln!(svg, "</g>");
        }
        let _ = writeln!(
            svg,
            r#"<text x="{LEFT}" y="{:.1}">critical path ({:.3} ms): {}</text>"#,
            TOP + lanes * ROW + 24.0,
            self.critical_path_ms(),
            escape(&self.critical_labels())
        );
        svg.push_str("</svg>\n");
        svg
    }
}

/// A tick's value without trailing zeros.
fn format_ms(ms: f64) -> String {
    let text = format!("{ms:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text.is_empty() {
        "0".to_string()
    } else {
        text.to_string()
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The table: one row per node (start, end and duration in ms, lane, `*`
/// on the critical path), then the device time and the critical path.
impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self
            .nodes
            .iter()
            .map(|n| n.label.chars().count())
            .max()
            .unwrap_or(0)
            .max(4);
        writeln!(
            f,
            "{:<width$}  {:<11}  {:>10}  {:>10}  {:>11}  {:>4}",
            "node", "kind", "start ms", "end ms", "duration ms", "lane"
        )?;
        for (i, n) in self.nodes.iter().enumerate() {
            writeln!(
                f,
                "{:<width$}  {:<11}  {:>10.3}  {:>10.3}  {:>11.3}  {:>4}{}",
                n.label,
                kind_name(n.kind),
                n.start_ms,
                n.end_ms,
                n.duration_ms(),
                n.lane,
                if self.critical.contains(&i) {
                    "  *"
                } else {
                    ""
                }
            )?;
        }
        writeln!(f, "device time: {:.3} ms", self.device_ms)?;
        write!(
            f,
            "critical path (*): {:.3} ms: {}",
            self.critical_path_ms(),
            self.critical_labels()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(label: &str, start_ms: f64, end_ms: f64, deps: &[usize]) -> NodeTime {
        NodeTime {
            label: label.to_string(),
            kind: NodeKind::Kernel,
            start_ms,
            end_ms,
            deps: deps.to_vec(),
            lane: 0,
        }
    }

    /// a -> [b, c] -> d with c the longer branch: two lanes, the path runs
    /// through c, and its durations add up to d's end.
    fn diamond() -> Profile {
        Profile::new(
            vec![
                node("a", 0.0, 1.0, &[]),
                node("b", 1.0, 2.0, &[0]),
                node("c", 1.0, 3.5, &[0]),
                node("d", 3.5, 4.0, &[1, 2]),
            ],
            4.1,
        )
    }

    #[test]
    fn a_node_starts_when_its_dependencies_end() {
        let mut nodes = vec![
            node("a", 0.0, 1.0, &[]),
            // Its start record ran 5 us before a's end record.
            node("b", 0.995, 2.0, &[0]),
            node("c", 3.0, 3.0, &[1]),
        ];
        order_times(&mut nodes);
        assert_eq!(nodes[1].start_ms, 1.0);
        assert_eq!((nodes[2].start_ms, nodes[2].end_ms), (3.0, 3.0));
    }

    #[test]
    fn lanes_separate_overlapping_nodes_only() {
        let p = diamond();
        let lanes: Vec<usize> = p.nodes().iter().map(|n| n.lane).collect();
        assert_eq!(lanes, [0, 0, 1, 0]);
        assert_eq!(p.lanes(), 2);
    }

    #[test]
    fn the_critical_path_follows_the_latest_dependency() {
        let p = diamond();
        assert_eq!(p.critical_path(), [0, 2, 3]);
        assert!((p.critical_path_ms() - 4.0).abs() < 1e-12);
        assert_eq!(p.critical_labels(), "a -> c -> d");
    }

    #[test]
    fn the_table_and_svg_name_every_node_and_the_path() {
        let p = diamond();
        let table = p.to_string();
        assert_eq!(table.lines().count(), 1 + 4 + 2, "{table}");
        assert!(
            table.contains("critical path (*): 4.000 ms: a -> c -> d"),
            "{table}"
        );
        let starred: Vec<&str> = table.lines().filter(|l| l.ends_with('*')).collect();
        assert_eq!(starred.len(), 3, "{table}");
        let svg = p.svg();
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<title>").count(), 4);
        assert_eq!(svg.matches(r##"stroke="#000000""##).count(), 3);
        assert!(svg.contains("lane 1"));
    }

    #[test]
    fn labels_are_escaped_in_the_svg() {
        let p = Profile::new(vec![node("a<b&\"c\"", 0.0, 1.0, &[])], 1.0);
        let svg = p.svg();
        assert!(svg.contains("a&lt;b&amp;&quot;c&quot;"));
        assert!(!svg.contains("a<b"));
    }

    #[test]
    fn an_empty_profile_draws() {
        let p = Profile::new(Vec::new(), 0.0);
        assert!(p.critical_path().is_empty());
        assert!(p.svg().contains("</svg>"));
        assert!(p.to_string().contains("device time"));
    }
}
