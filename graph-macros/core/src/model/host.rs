//! Memory the graph owns, declared at the top level of a named graph (its
//! exec hands the memory to the program between launches). Device buffers
//! (`buffer name: T[len];`) are used by nodes anywhere, as a buffer bound
//! `&mut`. Host buffers (`host name: T[len];`, page-locked host memory)
//! are used by copy nodes (either
//! side) and by host nodes whose closure takes the buffer as its parameter
//! (`|y: &[T]|` reads, `|y: &mut [T]|` writes), never in a conditional
//! body (which may run many times, or not at all, per launch) nor in a
//! device-launched graph. Races on them are checked like device buffers'.

use super::lower::{Context, Lowering};
use super::op::host_param;
use super::*;

/// What a graph-owned memory declaration declares, for messages.
struct Owned<'d> {
    /// "a host buffer", "a device buffer".
    what: &'static str,
    /// "host name: T[len];"
    syntax: &'static str,
    /// The keyword, where errors point.
    keyword: proc_macro2::TokenStream,
    attrs: &'d [syn::Attribute],
    name: &'d Ident,
}

impl<'a> Lowering<'a, '_> {
    pub(super) fn collect_host_buffer(
        &mut self,
        decl: &'a parse::HostDecl,
        level: LevelId,
        ctx: Context,
    ) {
        let owned = Owned {
            what: "a host buffer",
            syntax: "host name: T[len];",
            keyword: quote::ToTokens::to_token_stream(&decl.keyword),
            attrs: &decl.attrs,
            name: &decl.name,
        };
        if self.admit_owned(&owned, level, ctx) {
            self.model.host_buffers.push(decl);
        }
    }

    /// `buffer name: T[len];`: device memory the graph owns
    /// (`Graph::add_buffer`). Nodes use it anywhere, as a buffer bound
    /// `&mut`; the exec lends it out between launches.
    pub(super) fn collect_device_buffer(
        &mut self,
        decl: &'a parse::BufferDecl,
        level: LevelId,
        ctx: Context,
    ) {
        let owned = Owned {
            what: "a device buffer",
            syntax: "buffer name: T[len];",
            keyword: quote::ToTokens::to_token_stream(&decl.keyword),
            attrs: &decl.attrs,
            name: &decl.name,
        };
        if self.admit_owned(&owned, level, ctx) {
            self.model.device_buffers.push(decl);
        }
    }

    /// The rules both kinds of graph-owned memory share: declared at the
    /// top level of a named graph (its exec has an accessor for each),
    /// without attributes, once, under a name of its own.
    fn admit_owned(&mut self, decl: &Owned<'_>, level: LevelId, ctx: Context) -> bool {
        let what = decl.what;
        if let Some(attr) = decl.attrs.first() {
            self.diag.error(
                attr,
                format!("attributes are not allowed on {}s", &what[2..]),
            );
        }
        if self.refused_in_fragment(&decl.keyword, what) {
            return false;
        }
        if level != TOP || ctx.region.is_some() {
            self.diag.error_with_help(
                &decl.keyword,
                format!("{what} is declared at the top level of a graph"),
                format!(
                    "move `{}` out of this block: one buffer serves the whole graph",
                    decl.syntax
                ),
            );
            return false;
        }
        if self.model.def.name.is_none() {
            self.diag.error_with_help(
                &decl.keyword,
                format!("{}s are declared in named graphs", &what[2..]),
                "the exec of a named graph (`graph Name(..) { .. }`) hands the memory to the program between launches",
            );
            return false;
        }
        let name = decl.name.to_string();
        if self.model.host_named(&name).is_some() || self.model.device_named(&name).is_some() {
            self.diag.error(
                decl.name,
                format!("the {} `{name}` is declared more than once", &what[2..]),
            );
            return false;
        }
        if self.model.def.params.iter().any(|p| p.name == name) {
            self.diag.error_with_help(
                decl.name,
                format!("`{name}` is a parameter of the graph and {what}"),
                format!("give the {} a name of its own", &what[2..]),
            );
            return false;
        }
        if crate::check::EXEC_METHODS.contains(&name.as_str()) || name.starts_with("__") {
            self.diag.error_with_help(
                decl.name,
                format!("{what} cannot be named `{name}`: the exec has a method of that name"),
                format!(
                    "its exec has an accessor named after each {}; rename it",
                    &what[2..]
                ),
            );
            return false;
        }
        true
    }

    /// Checks every use of a host buffer: host nodes' parameters name one,
    /// and no use is in a conditional body or a device-launched graph; a
    /// host buffer named like a node or an allocation is refused (its
    /// accessor and the node's would clash).
    pub(super) fn resolve_host_uses(&mut self) {
        let owned = (self
            .model
            .host_buffers
            .iter()
            .map(|h| (&h.name, "a host buffer")))
        .chain(
            self.model
                .device_buffers
                .iter()
                .map(|d| (&d.name, "a device buffer")),
        );
        for (name, what) in owned {
            let text = name.to_string();
            if self.labels.contains_key(&text) || self.model.buffer_named(&text).is_some() {
                self.diag.error_with_help(
                    name,
                    format!("`{text}` names both {what} and a node"),
                    "give them different names: the exec has an accessor for each",
                );
            }
        }
        let device = self.model.attrs.device_launch.is_some();
        for node in &self.model.nodes {
            let used: Vec<&Ident> = match node.op {
                Op::Host { closure, .. } => match host_param(closure) {
                    Err((tokens, message)) => {
                        self.diag.error(tokens, message);
                        continue;
                    }
                    Ok(None) => continue,
                    Ok(Some(param)) => {
                        let declared = self.model.host_named(&param.name.to_string());
                        let held = declared.and_then(|h| super::primitive(&h.ty));
                        let taken = param.elem.and_then(|e| Some((e, super::primitive(e)?)));
                        if let (Some(held), Some((elem, taken))) = (held, taken) {
                            if held != taken {
                                let reference = if param.write { "&mut " } else { "&" };
                                self.diag.error_with_help(
                                    elem,
                                    format!(
                                        "the host buffer `{}` holds `{held}`, not `{taken}`",
                                        param.name
                                    ),
                                    format!("take `|{}: {reference}[{held}]|`", param.name),
                                );
                            }
                        }
                        if declared.is_none() {
                            self.diag.error_with_help(
                                param.name,
                                format!("`{}` is not a host buffer of this graph", param.name),
                                format!(
                                    "a host node's parameter names the host buffer it reads or writes: declare it, `host {}: T[len];`",
                                    param.name
                                ),
                            );
                            continue;
                        }
                        vec![param.name]
                    }
                },
                Op::Copy { src, dst } => [src, dst]
                    .into_iter()
                    .filter_map(|e| match e {
                        syn::Expr::Path(p) => p.path.get_ident(),
                        _ => None,
                    })
                    .filter(|i| self.model.host_named(&i.to_string()).is_some())
                    .collect(),
                _ => continue,
            };
            for name in used {
                if node.level != TOP {
                    self.diag.error_with_help(
                        name,
                        format!("the host buffer `{name}` is used in a conditional body"),
                        "a body may run many times, or not at all, in one launch: use host data before or after the conditional node",
                    );
                } else if device {
                    self.diag.error(
                        name,
                        format!("the host buffer `{name}` is used in a device-launched graph (`#[device_launch]` graphs cannot use host memory)"),
                    );
                }
            }
        }
    }
}
