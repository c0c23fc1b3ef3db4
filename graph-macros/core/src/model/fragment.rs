//! Lowering of fragments: declared once at the top of a graph, each
//! placement collected again under its label's prefix (`pro.step`), with
//! a start and an end standing for it in edges.

use super::lower::{region_node, Context, LabelTarget, Lowering};
use super::*;

impl<'a> Lowering<'a, '_> {
    pub(super) fn declare_fragment(&mut self, fragment: &'a parse::Fragment) {
        if let Some(attr) = fragment.attrs.first() {
            self.diag
                .error(attr, "attributes are not allowed on a fragment");
        }
        let name = fragment.name.to_string();
        if self.fragments.insert(name.clone(), fragment).is_some() {
            self.diag.error(
                &fragment.name,
                format!("the fragment `{name}` is declared more than once"),
            );
        }
    }

    /// Graph memory and handle declarations belong to the graph, not to a
    /// fragment placed in several spots (each placement would declare them
    /// again under one name).
    pub(super) fn refused_in_fragment(&self, tokens: impl quote::ToTokens, what: &str) -> bool {
        let Some(fragment) = self.placing.last() else {
            return false;
        };
        self.diag.error_with_help(
            tokens,
            format!("{what} cannot be in a fragment (`{fragment}`)"),
            "declare it in the graph, around the placements that use it",
        );
        true
    }

    /// The name of a label collected now (`pro.step` in placement `pro`).
    pub(super) fn qualified(&self, label: &Ident) -> String {
        format!("{}{label}", self.prefix)
    }

    pub(super) fn collect_place(
        &mut self,
        syntax: &'a parse::Placement,
        level: LevelId,
        ctx: Context,
    ) {
        if let Some(attr) = syntax.attrs.first() {
            self.diag
                .error(attr, "attributes are not allowed on a placed fragment");
        }
        let fragment_name = syntax.fragment.to_string();
        let Some(&fragment) = self.fragments.get(&fragment_name) else {
            let similar = super::resolve::most_similar(
                &fragment_name,
                self.fragments.keys().map(String::as_str),
            )
            .map(str::to_string);
            let help = match &similar {
                Some(similar) => format!("a fragment with a similar name is declared: `{similar}`"),
                None => "declare it at the top of the graph: `fragment name { ... }`".to_string(),
            };
            self.diag.error_with_help(
                &syntax.fragment,
                format!("unknown fragment `{fragment_name}`"),
                help,
            );
            // The fragment meant is this error's, not one never placed.
            self.placed_fragments.extend(similar);
            return;
        };
        if self.placing.contains(&fragment_name) {
            self.diag.error_with_help(
                &syntax.fragment,
                format!("the fragment `{fragment_name}` is placed inside itself"),
                "a fragment placed in its own body would never end",
            );
            return;
        }
        let id = self.model.places.len();
        let name = self.qualified(&syntax.label);
        let make =
            |origin, name: String| region_node(&syntax.label, name, Op::Empty, origin, level, ctx);
        let start = self.push_node(make(Origin::PlaceStart(id), name.clone()));
        self.register_label(&syntax.label, LabelTarget::Place(id));
        self.model.places.push(Place {
            syntax,
            name: name.clone(),
            level,
            region: ctx.region,
            start,
            end: usize::MAX,
        });
        let inner = Context {
            region: Some(Region::Place(id)),
            place: Some(id),
            ..ctx
        };
        let outer_prefix = std::mem::replace(&mut self.prefix, format!("{name}."));
        self.placed_fragments.push(fragment_name.clone());
        self.placing.push(fragment_name);
        self.collect(&fragment.body, level, inner);
        self.placing.pop();
        self.prefix = outer_prefix;
        let end = self.push_node(make(Origin::PlaceEnd(id), format!("{name}.end")));
        self.model.places[id].end = end;
    }

    /// A fragment never placed is never checked (its nodes are checked
    /// where placed): an error, rather than text that compiles unseen.
    pub(super) fn check_fragments_placed(&self, def: &'a GraphDef) {
        for stmt in &def.body.stmts {
            let crate::parse::Stmt::Fragment(fragment) = stmt else {
                continue;
            };
            let name = fragment.name.to_string();
            if !self.placed_fragments.contains(&name) {
                self.diag.error_with_help(
                    &fragment.name,
                    format!("the fragment `{name}` is never placed"),
                    format!("place it with `label: use {name};`, or remove it (a fragment is checked where it is placed)"),
                );
            }
        }
    }
}
