//! Name resolution for repeated blocks: an index names an iteration of the
//! block holding the edge; a label is named in edges of its own block; a
//! handle drives and is set by nodes of the iterations that declare it.

use super::attrs::node_attrs;
use super::lower::{region_node, Context, LabelTarget, Lowering};
use super::*;
use crate::parse::EdgeLabel;

impl<'a> Lowering<'a, '_> {
    /// `label[var-k]`: `var` must be the loop variable of the repeated
    /// block holding the edge.
    pub(super) fn index_back(
        &self,
        label: &EdgeLabel,
        index: &parse::LabelIndex,
        repeat: Option<RepeatId>,
    ) -> Option<usize> {
        let var = &index.var;
        let Some(r) = repeat else {
            self.diag.error_with_help(
                &index.tokens,
                format!("`{}` names an iteration, but this edge is outside every repeated block", label.text()),
                format!("name `{}` alone; an edge outside a repeated block names the block, which stands for all its iterations", label.label),
            );
            return None;
        };
        let block = &self.model.repeats[r].syntax;
        if *var != block.var {
            let outer = std::iter::successors(self.model.repeats[r].parent, |&o| {
                self.model.repeats[o].parent
            })
            .find(|&o| self.model.repeats[o].syntax.var == *var);
            let message = match outer {
                Some(o) => format!(
                    "`{var}` is the loop variable of `{}`, but this edge is in `{}`, whose loop variable is `{}`",
                    self.model.repeats[o].syntax.label, block.label, block.var
                ),
                None => format!("`{var}` is not the loop variable of a repeated block holding this edge"),
            };
            self.diag.error_with_help(
                &index.tokens,
                message,
                format!(
                    "an edge between iterations is written in the block that repeats, indexed by its variable: `{}[{}-1] -> ...`",
                    label.label, block.var
                ),
            );
            return None;
        }
        Some(index.back)
    }

    pub(super) fn report_repeat_crossing(
        &self,
        label: &EdgeLabel,
        home: Option<RepeatId>,
        here: Option<RepeatId>,
        ends: (bool, bool),
    ) {
        let name = &label.label;
        // The block directly under `here` that holds the label, if any.
        let under_here = std::iter::successors(home, |&r| self.model.repeats[r].parent)
            .find(|&r| self.model.repeats[r].parent == here);
        match (under_here, here) {
            (Some(block), _) => {
                let block = &self.model.repeats[block].syntax.label;
                self.diag.error_with_help(
                    name,
                    format!("`{name}` is inside the repeated block `{block}`: this edge would join it in one iteration only"),
                    format!("name `{block}` here, which stands for all its iterations (its first nodes as a target, its last nodes as a source)"),
                );
            }
            (None, Some(here)) => {
                let syntax = self.model.repeats[here].syntax;
                let (block, var) = (&syntax.label, &syntax.var);
                if name == block {
                    self.diag.error_with_help(
                        name,
                        format!("`{name}` is the repeated block itself: an edge inside it joins nodes of its body"),
                        format!("name members of its body; an edge between its iterations indexes one by `{var}` (as in `a[{var}-1] -> a`)"),
                    );
                    return;
                }
                // The edge as written outside the block, in its direction.
                let outside = match ends {
                    (true, false) => format!("`{name} -> {block}`"),
                    (false, true) => format!("`{block} -> {name}`"),
                    _ => format!("`{name} -> {block}` or `{block} -> {name}`"),
                };
                self.diag.error_with_help(
                    name,
                    format!("`{name}` is outside the repeated block `{block}`: an edge inside it joins nodes of its body"),
                    format!("order `{block}` itself, outside it (as in {outside}), so that every iteration follows or precedes `{name}`"),
                );
            }
            (None, None) => self
                .diag
                .error(name, format!("`{name}` is in another repeated block")),
        }
    }

    /// A loop variable names its block's iteration only inside the block:
    /// a kernel, copy or fill operand outside it that names it is refused
    /// here, naming the block, instead of rustc's "cannot find value".
    pub(super) fn check_loop_vars_in_scope(&self) {
        if self.model.repeats.is_empty() {
            return;
        }
        for node in 0..self.model.nodes.len() {
            if !matches!(
                self.model.nodes[node].op,
                Op::Kernel(_) | Op::Copy { .. } | Op::Fill { .. }
            ) {
                continue;
            }
            let chain = self.model.repeat_chain(node);
            let in_scope = |ident: &Ident| {
                chain
                    .iter()
                    .any(|&r| self.model.repeats[r].syntax.var == *ident)
            };
            let mut reported: Vec<&Ident> = Vec::new();
            let node_ref = &self.model.nodes[node];
            for ident in node_ref.uses.iter().chain(&node_ref.config_uses) {
                if in_scope(ident)
                    || self.model.def.params.iter().any(|p| p.name == *ident)
                    || self.model.nodes[node].bound.contains(ident)
                    || reported.contains(&ident)
                {
                    continue;
                }
                let Some(block) = self.model.repeats.iter().find(|r| r.syntax.var == *ident) else {
                    continue;
                };
                reported.push(ident);
                let label = &block.syntax.label;
                self.diag.error_with_help(
                    ident,
                    format!("`{ident}` is the loop variable of `{label}`, which does not hold `{}`", self.model.nodes[node].name),
                    format!("a loop variable is in scope inside its own block only: move the node into `{label}`, or use the variable of a block that holds it"),
                );
            }
        }
    }

    /// A kernel or capture that sets a handle is inside the repeated blocks
    /// that declare it (each iteration declares its own; outside, the
    /// handle of no one iteration is meant).
    pub(super) fn check_setters_in_blocks(&self) {
        if self.model.repeats.is_empty() {
            return;
        }
        for node in 0..self.model.nodes.len() {
            for handle in self.model.handles_set_by(node) {
                let declared = &self.model.handles[handle].repeats;
                let chain = self.model.repeat_chain(node);
                let Some(&inner) = declared.iter().find(|r| !chain.contains(r)) else {
                    continue;
                };
                let name = &self.model.handles[handle].syntax.name;
                let Some(ident) = self.model.nodes[node].uses.iter().find(|i| *i == name) else {
                    continue;
                };
                let block = &self.model.repeats[inner].syntax.label;
                self.diag.error_with_help(
                    ident,
                    format!("the handle `{name}` is declared in the repeated block `{block}`, which does not hold `{}`", self.model.nodes[node].name),
                    format!("each iteration of `{block}` declares its own `{name}`: set it inside the block"),
                );
            }
        }
    }

    /// A conditional node repeats exactly as its handle's declaration does:
    /// a handle of every iteration is seen only inside the block, and one
    /// declared outside a block would drive a node of every iteration.
    pub(super) fn handle_repeats_match(
        &self,
        node: NodeId,
        handle: HandleId,
        ident: &Ident,
    ) -> bool {
        let node_chain = self.model.repeat_chain(node);
        let handle_chain = &self.model.handles[handle].repeats;
        if let Some(&inner) = handle_chain.iter().find(|r| !node_chain.contains(r)) {
            let block = &self.model.repeats[inner].syntax.label;
            self.diag.error_with_help(
                ident,
                format!("the handle `{ident}` is declared in the repeated block `{block}`, which does not hold `{}`", self.model.nodes[node].name),
                format!("each iteration of `{block}` declares its own `{ident}`: use it inside the block"),
            );
            return false;
        }
        if let Some(&inner) = node_chain.iter().find(|r| !handle_chain.contains(r)) {
            let block = &self.model.repeats[inner].syntax.label;
            self.diag.error_with_help(
                ident,
                format!(
                    "the handle `{ident}` would drive `{}` in every iteration of `{block}`, but a handle drives one conditional node",
                    self.model.nodes[node].name
                ),
                format!("declare the handle inside `{block}` (`cond {ident};`), so each iteration has its own"),
            );
            return false;
        }
        true
    }

    /// The repeated blocks around a statement at `level` in `ctx`,
    /// innermost first, across conditional bodies.
    pub(super) fn repeats_around(&self, level: LevelId, ctx: Context) -> Vec<RepeatId> {
        let mut chain = Vec::new();
        let mut at = ctx.repeat;
        while let Some(r) = at {
            chain.push(r);
            at = self.model.repeats[r].parent;
        }
        if let Some(parent) = self.model.levels[level].parent {
            chain.extend(self.model.repeat_chain(parent));
        }
        chain
    }

    pub(super) fn collect_repeat(
        &mut self,
        syntax: &'a parse::RepeatBlock,
        level: LevelId,
        ctx: Context,
    ) {
        let attrs = node_attrs(&syntax.attrs, self.diag);
        let other = [
            attrs.disabled,
            attrs.escape,
            attrs.priority.as_ref().map(|p| p.0),
        ];
        if let Some(span) = other.into_iter().flatten().next() {
            self.diag.error_at(
                span,
                crate::diag::with_help(
                    "a repeated block takes only `#[disjoint]`",
                    "put other attributes on the nodes inside it",
                ),
            );
        }
        let outer = self.repeats_around(level, ctx);
        if let Some(&same) = outer
            .iter()
            .find(|&&r| self.model.repeats[r].syntax.var == syntax.var)
        {
            let other = &self.model.repeats[same].syntax.label;
            self.diag.error_with_help(
                &syntax.var,
                format!(
                    "`{}` is already the loop variable of `{other}`, which holds this block",
                    syntax.var
                ),
                "name each nested block's loop variable differently (`w` for lanes, `i` for steps)",
            );
        }
        if self.model.def.params.iter().any(|p| p.name == syntax.var) {
            self.diag.error_with_help(
                &syntax.var,
                format!("the loop variable `{}` has the name of a parameter", syntax.var),
                "rename the loop variable or the parameter: inside the graph, one name means one thing",
            );
        }
        let id = self.model.repeats.len();
        let name = self.qualified(&syntax.label);
        // Block variables (`__count_..`) take the label, or in a placed
        // fragment one led by the block's index (see `push_node`).
        let stem = match ctx.place {
            Some(_) => format!("{id}_{}", syntax.label),
            None => syntax.label.to_string(),
        };
        let make =
            |origin, name: String| region_node(&syntax.label, name, Op::Empty, origin, level, ctx);
        let start = self.push_node(make(Origin::RepeatStart(id), name.clone()));
        self.register_label(&syntax.label, LabelTarget::Repeat(id));
        self.model.repeats.push(Repeat {
            syntax,
            level,
            parent: ctx.repeat,
            region: ctx.region,
            start,
            end: usize::MAX,
            carried: Vec::new(),
            stem,
            disjoint: attrs.disjoint,
        });
        let inner = Context {
            repeat: Some(id),
            region: Some(Region::Repeat(id)),
            ..ctx
        };
        self.collect(&syntax.body, level, inner);
        let end = self.push_node(make(Origin::RepeatEnd(id), format!("{name}.end")));
        self.model.repeats[id].end = end;
    }
}
