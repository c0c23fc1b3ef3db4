//! Host buffers (`host name: T[len];`): page-locked host memory the graph
//! owns. Declared at the top level of a named graph (its exec hands the
//! memory to the program between launches); used by copy nodes (either
//! side) and by host nodes whose closure takes the buffer as its parameter
//! (`|y: &[T]|` reads, `|y: &mut [T]|` writes), never in a conditional
//! body (which may run many times, or not at all, per launch) nor in a
//! device-launched graph. Races on them are checked like device buffers'.

use super::lower::{Context, Lowering};
use super::op::host_param;
use super::*;

impl<'a> Lowering<'a, '_> {
    pub(super) fn collect_host_buffer(
        &mut self,
        decl: &'a parse::HostDecl,
        level: LevelId,
        ctx: Context,
    ) {
        if let Some(attr) = decl.attrs.first() {
            self.diag
                .error(attr, "attributes are not allowed on host buffers");
        }
        if self.refused_in_fragment(decl.keyword, "a host buffer") {
            return;
        }
        if level != TOP || ctx.region.is_some() {
            self.diag.error_with_help(
                decl.keyword,
                "a host buffer is declared at the top level of a graph",
                "move `host name: T[len];` out of this block: one buffer serves the whole graph",
            );
            return;
        }
        if self.model.def.name.is_none() {
            self.diag.error_with_help(
                decl.keyword,
                "host buffers are declared in named graphs",
                "the exec of a named graph (`graph Name(..) { .. }`) hands the memory to the program between launches",
            );
            return;
        }
        let name = decl.name.to_string();
        if self.model.host_named(&name).is_some() {
            self.diag.error(
                &decl.name,
                format!("the host buffer `{name}` is declared more than once"),
            );
            return;
        }
        if self.model.def.params.iter().any(|p| p.name == name) {
            self.diag.error_with_help(
                &decl.name,
                format!("`{name}` is a parameter of the graph and a host buffer"),
                "give the host buffer a name of its own",
            );
            return;
        }
        if crate::check::EXEC_METHODS.contains(&name.as_str()) || name.starts_with("__") {
            self.diag.error_with_help(
                &decl.name,
                format!(
                    "a host buffer cannot be named `{name}`: the exec has a method of that name"
                ),
                "its exec has an accessor named after each host buffer; rename it",
            );
            return;
        }
        self.model.host_buffers.push(decl);
    }

    /// Checks every use of a host buffer: host nodes' parameters name one,
    /// and no use is in a conditional body or a device-launched graph; a
    /// host buffer named like a node or an allocation is refused (its
    /// accessor and the node's would clash).
    pub(super) fn resolve_host_uses(&mut self) {
        for &decl in &self.model.host_buffers {
            let name = decl.name.to_string();
            if self.labels.contains_key(&name) || self.model.buffer_named(&name).is_some() {
                self.diag.error_with_help(
                    &decl.name,
                    format!("`{name}` names both a host buffer and a node"),
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
                        if self.model.host_named(&param.name.to_string()).is_none() {
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
