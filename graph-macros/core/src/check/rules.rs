//! Local rules: which node kinds and attributes are allowed where.

use crate::diag::Diagnostics;
use crate::model::{Kind, Model, NodeId, Op, Origin, TOP};
use crate::parse::EdgeKind;

/// Methods of a generated exec type: a node with an accessor may not take
/// these names.
pub(crate) const EXEC_METHODS: &[&str] = &[
    "launch",
    "launch_on_own_stream",
    "upload",
    "update",
    "synchronize",
    "bound_mut",
    "take_escaped",
    "exec",
    "device_handle",
];

pub fn check(model: &Model<'_>, diag: &Diagnostics) {
    if model.def.name.is_some() {
        check_generated_names(model, diag);
    } else {
        check_references_to_allocations(model, diag);
    }
    for node in &model.nodes {
        check_attributes(model, node, diag);
        if node.level != TOP {
            check_body_node(model, node, diag);
        }
        check_host_memory_operands(model, node, diag);
        check_host_closure_captures(model, node, diag);
        check_element_types(model, node, diag);
        if model.attrs.device_launch.is_some() {
            check_device_launch_node(node, diag);
        }
        check_read_only_destination(model, node, diag);
    }
    check_loop_variables(model, diag);
    let carried = model
        .repeats
        .iter()
        .flat_map(|r| &r.carried)
        .map(|c| (c.kind, Some(&c.tokens), c.from, c.to));
    let edges = model
        .levels
        .iter()
        .flat_map(|l| &l.edges)
        .map(|e| (e.kind, e.tokens.as_ref(), e.from, e.to));
    let mut disabled_reported: Vec<NodeId> = Vec::new();
    for (kind, tokens, from, to) in edges.chain(carried) {
        {
            if kind == EdgeKind::Full {
                continue;
            }
            check_disabled_after_programmatic(model, from, to, &mut disabled_reported, diag);
            let Some(tokens) = tokens else { continue };
            for end in [from, to] {
                let node = &model.nodes[end];
                if node.kind() != Kind::Kernel {
                    diag.error_with_help(
                        tokens,
                        format!(
                            "a programmatic dependent launch edge joins two kernel nodes, but `{}` is {}",
                            node.name,
                            node.kind().describe()
                        ),
                        "use `->` for an ordinary dependency",
                    );
                    break;
                }
            }
        }
    }
}

/// A kernel after a programmatic edge completes after the kernel before
/// it only because it waits for it (`griddepcontrol.wait`): disabled, it
/// waits for nothing, and the nodes after it, which the checks order
/// after that kernel through it, could run (or free its memory) while it
/// runs.
fn check_disabled_after_programmatic(
    model: &Model<'_>,
    from: NodeId,
    to: NodeId,
    reported: &mut Vec<NodeId>,
    diag: &Diagnostics,
) {
    let node = &model.nodes[to];
    let Some(span) = node.attrs.disabled else {
        return;
    };
    if reported.contains(&to) {
        return;
    }
    reported.push(to);
    diag.error_at(
        span,
        crate::diag::with_help(
            format!(
                "`{}` follows a programmatic dependent launch edge from `{}`, so it cannot be \
                 `#[disabled]`: disabled, it would not wait for `{}`, and the nodes after it \
                 could run while `{}` does",
                node.name, model.nodes[from].name, model.nodes[from].name, model.nodes[from].name
            ),
            format!(
                "join `{}` to `{}` with `->`, or leave `{}` enabled",
                model.nodes[from].name, node.name, node.name
            ),
        ),
    );
}

/// A loop variable is a variable of the builder: it must not hide a
/// buffer or a handle of the graph.
fn check_loop_variables(model: &Model<'_>, diag: &Diagnostics) {
    for repeat in &model.repeats {
        let var = &repeat.syntax.var;
        let buffer = model.buffer_named(&var.to_string()).is_some();
        let handle = model.handles.iter().any(|h| h.syntax.name == *var);
        if buffer || handle {
            let what = if buffer {
                "a graph allocation"
            } else {
                "a conditional handle"
            };
            diag.error_with_help(
                var,
                format!("the loop variable `{var}` has the name of {what}"),
                "rename one of them: inside the block, the name would mean the iteration's index",
            );
        }
    }
}

fn check_attributes(model: &Model<'_>, node: &crate::model::Node<'_>, diag: &Diagnostics) {
    if let Some(span) = node.attrs.disabled {
        if !matches!(node.kind(), Kind::Kernel | Kind::Copy | Kind::Fill) {
            diag.error_at(
                span,
                crate::diag::with_help(
                    format!(
                        "`#[disabled]` applies only to kernel, copy and fill nodes, but `{}` is {}",
                        node.name,
                        node.kind().describe()
                    ),
                    "CUDA can enable and disable only kernel, memcpy and memset nodes",
                ),
            );
        }
    }
    if let Some((span, _)) = &node.attrs.priority {
        if node.kind() != Kind::Kernel {
            diag.error_at(
                *span,
                format!(
                    "`#[priority]` applies only to kernel nodes, but `{}` is {}",
                    node.name,
                    node.kind().describe()
                ),
            );
        } else if model.attrs.use_node_priority.is_none() {
            diag.error_at(
                *span,
                crate::diag::with_help(
                    "node priorities are ignored unless the graph is instantiated with them",
                    "add `#[use_node_priority]` to the graph",
                ),
            );
        }
    }
    if let Some(span) = node.attrs.escape {
        if node.kind() != Kind::Alloc {
            diag.error_at(
                span,
                format!(
                    "`#[escape]` applies only to alloc nodes, but `{}` is {}",
                    node.name,
                    node.kind().describe()
                ),
            );
        }
    }
}

fn check_body_node(model: &Model<'_>, node: &crate::model::Node<'_>, diag: &Diagnostics) {
    let body_of = model.levels[node.level]
        .parent
        .map(|p| model.nodes[p].name.as_str())
        .unwrap_or_default();
    match node.kind() {
        Kind::Alloc | Kind::Free => {
            let tokens = match node.origin {
                Origin::Stmt(stmt) => quote::ToTokens::to_token_stream(&stmt.label),
                Origin::ScopeAlloc(scope) => {
                    quote::ToTokens::to_token_stream(&model.scopes[scope].syntax.keyword)
                }
                _ => return,
            };
            diag.error_with_help(
                tokens,
                format!("a conditional body cannot hold graph memory nodes: `{}` is in the body of `{body_of}`", node.name),
                format!("allocate before `{body_of}` and free after it, in the enclosing graph: an alloc scope around it does both (`alloc name: T[len] {{ {body_of}: .. }}`)"),
            );
        }
        Kind::Host | Kind::Record | Kind::Wait => diag.error_with_help(
            &node.label,
            format!(
                "a conditional body cannot hold {}: `{}` is in the body of `{body_of}`",
                node.kind().describe(),
                node.name
            ),
            "conditional bodies may hold only kernel, empty, copy, fill, child graph and conditional nodes",
        ),
        _ => {}
    }
}

fn check_device_launch_node(node: &crate::model::Node<'_>, diag: &Diagnostics) {
    if matches!(
        node.kind(),
        Kind::Kernel | Kind::Copy | Kind::Fill | Kind::Child | Kind::Capture
    ) {
        return;
    }
    if matches!(node.origin, Origin::ScopeFree(_)) || node.origin.is_virtual() {
        return;
    }
    diag.error_with_help(
        &node.label,
        format!(
            "a `#[device_launch]` graph may hold only kernel, copy, fill and child graph nodes, but `{}` is {}",
            node.name,
            node.kind().describe()
        ),
        "CUDA refuses to instantiate other node kinds for device launch",
    );
}

/// Labels become accessor methods and buffers become variables: they must
/// not clash with the exec's methods or the graph's parameters.
fn check_generated_names(model: &Model<'_>, diag: &Diagnostics) {
    // A handle is a variable of the builder too: one named like a parameter
    // would shadow it (and a kernel meant to take the parameter would get
    // the handle).
    for handle in &model.handles {
        let name = &handle.syntax.name;
        if model.def.params.iter().any(|p| p.name == *name) {
            diag.error_with_help(
                name,
                format!("the conditional handle `{name}` has the name of a parameter"),
                "rename the handle or the parameter: inside the graph, one name means one thing",
            );
            continue;
        }
        // A top-level handle is a field of the graph's `bound()`, beside
        // its host buffers, device buffers and escaping allocations (and
        // the generated code's own fields, named `__..`).
        if !handle.is_top_level() {
            continue;
        }
        let text = name.to_string();
        if text.starts_with("__") {
            diag.error_with_help(
                name,
                format!("a conditional handle at the top level cannot be named `{name}`"),
                "names starting with `__` are the generated code's: rename the handle",
            );
            continue;
        }
        let escaping = model
            .buffer_named(&text)
            .is_some_and(|b| model.buffers[b].escape);
        let other = match () {
            _ if model.host_named(&text).is_some() => "a host buffer",
            _ if model.device_named(&text).is_some() => "a device buffer",
            _ if escaping => "an escaping allocation",
            _ => continue,
        };
        diag.error_with_help(
            name,
            format!("the conditional handle `{name}` has the name of {other}"),
            "rename one of them: each is a field of the graph's `bound()`",
        );
    }
    for node in &model.nodes {
        let name = node.label.to_string();
        let accessor = matches!(node.kind(), Kind::Kernel | Kind::Copy | Kind::Fill)
            && matches!(node.origin, Origin::Stmt(_));
        if accessor && EXEC_METHODS.contains(&name.as_str()) {
            diag.error_with_help(
                &node.label,
                format!("the label `{name}` clashes with the method `{name}` of the generated exec type"),
                "rename the node; each kernel, copy and fill node gets an accessor method named after its label",
            );
        }
        let buffer = matches!(node.origin, Origin::ScopeAlloc(_))
            || (node.kind() == Kind::Alloc && matches!(node.origin, Origin::Stmt(_)));
        if buffer && model.def.params.iter().any(|p| p.name == node.label) {
            diag.error_with_help(
                &node.label,
                format!("the graph allocation `{name}` has the name of a parameter"),
                "rename the allocation or the parameter: inside the graph, the name refers to the allocation",
            );
        }
    }
}

/// In the expression form `&x` / `&mut x` binds the caller's variable `x`;
/// when the graph also allocates a buffer `x`, the operand would silently
/// reach the caller's variable while the checker reasons about the
/// allocation.
fn check_references_to_allocations(model: &Model<'_>, diag: &Diagnostics) {
    let operands = model
        .nodes
        .iter()
        .flat_map(|node| node.op.buffer_operands());
    for expr in operands {
        let Some(place) = crate::model::place(expr) else {
            continue;
        };
        let ident = &place.ident;
        if model.buffer_named(&ident.to_string()).is_some() {
            let reference = crate::model::Referenced::prefix(place.mutable, place.deref);
            diag.error_with_help(
                expr,
                format!("`{reference}{ident}` binds the caller's variable `{ident}`, but `{ident}` is also an allocation of this graph"),
                format!("write `{ident}` to use the allocation, or rename the allocation to use the caller's variable"),
            );
        }
    }
}

/// A host node's closure that names a parameter the graph borrows (`data:
/// &[f32]`): the closure runs on the driver's thread after the launch call
/// returns, so it must own what it uses. rustc's error would be about the
/// generated builder (`__graph` escaping, the whole invocation).
fn check_host_closure_captures(
    model: &Model<'_>,
    node: &crate::model::Node<'_>,
    diag: &Diagnostics,
) {
    if !matches!(node.op, Op::Host { .. }) {
        return;
    }
    let mut reported: Vec<&syn::Ident> = Vec::new();
    for ident in &node.uses {
        if node.bound.contains(ident) || reported.contains(&ident) {
            continue;
        }
        let Some(param) = model.def.params.iter().find(|p| p.name == *ident) else {
            continue;
        };
        let syn::Type::Reference(reference) = &param.ty else {
            continue;
        };
        if reference
            .lifetime
            .as_ref()
            .is_some_and(|l| l.ident == "static")
        {
            continue;
        }
        reported.push(ident);
        let ty = crate::model::type_spelled(&param.ty);
        diag.error_with_help(
            ident,
            format!(
                "host node `{}` uses `{ident}`, which the graph borrows (`{ident}: {ty}`): a host node runs after the launch call returns, so its closure must own what it uses",
                node.name
            ),
            "pass an owned value the closure can move in (a `Vec` or an `Arc`), or copy the data into a host buffer (`host name: T[n];`) that the closure takes",
        );
    }
}

/// Host memory where only device memory goes: a kernel argument, or an
/// operand of a copy in a conditional body (bodies copy device memory
/// only). rustc would report a type mismatch against the runtime's
/// buffer type, or a race on it first.
fn check_host_memory_operands(
    model: &Model<'_>,
    node: &crate::model::Node<'_>,
    diag: &Diagnostics,
) {
    match &node.op {
        Op::Kernel(k) => {
            for arg in &k.args {
                for (_, value) in crate::model::argument_values(arg) {
                    if let Some((name, memory)) = model.host_memory(value) {
                        diag.error_with_help(
                            value,
                            format!("`{name}` is {}: a kernel takes device buffers", memory.describe()),
                            format!("copy it to a device buffer first (`load: copy {name} => buf;`, ordered before `{}`) and pass that", node.name),
                        );
                    }
                }
            }
        }
        Op::Fill { dst, .. } => {
            if let Some((name, memory)) = model.host_memory(dst) {
                diag.error_with_help(
                    *dst,
                    format!("`{name}` is {}: a fill writes device buffers", memory.describe()),
                    "fill a device buffer (and copy it back), or set the host data before the launch",
                );
            }
        }
        Op::Copy { src, dst } => {
            let (rule, help) = match model.levels[node.level].parent {
                Some(body) => {
                    let body_of = &model.nodes[body].name;
                    (
                        format!("a copy in a conditional body moves device memory only: `{}` is in the body of `{body_of}`", node.name),
                        format!("copy it outside `{body_of}`, before or after it"),
                    )
                }
                None if model.attrs.device_launch.is_some() => (
                    "a `#[device_launch]` graph copies device memory only".to_string(),
                    "copy it in a graph launched from the host, before or after this one"
                        .to_string(),
                ),
                None => return,
            };
            for operand in [src, dst] {
                if let Some((name, memory)) = model.host_memory(operand) {
                    diag.error_with_help(
                        *operand,
                        format!("`{name}` is {}, and {rule}", memory.describe()),
                        &help,
                    );
                }
            }
        }
        _ => {}
    }
}

/// A copy between buffers of two element types, or a fill with a literal
/// of another type than its buffer's, where the graph spells both as
/// primitive types: rustc would report a mismatch against the runtime's
/// buffer types, over the whole macro.
fn check_element_types(model: &Model<'_>, node: &crate::model::Node<'_>, diag: &Diagnostics) {
    match &node.op {
        Op::Copy { src, dst } => {
            let (Some(from), Some(into)) = (model.element_type(src), model.element_type(dst))
            else {
                return;
            };
            if from != into {
                let [from_name, into_name] =
                    [*src, *dst].map(|e| quote::ToTokens::to_token_stream(e).to_string());
                diag.error_with_help(
                    *dst,
                    format!("`{}` copies `{from_name}` (`{from}`) into `{into_name}` (`{into}`): a copy keeps the element type", node.name),
                    match model.buffer_named(&into_name).is_some()
                        || model.device_named(&into_name).is_some()
                        || model.host_named(&into_name).is_some()
                    {
                        true => format!("declare `{into_name}` with `{from}` elements, or copy into a buffer of `{from}` and convert with a kernel"),
                        false => format!("copy into a buffer of `{from}`, and convert with a kernel"),
                    },
                );
            }
        }
        Op::Fill { dst, value, .. } => {
            let (Some(element), Some(literal)) =
                (model.element_type(dst), crate::model::literal_suffix(value))
            else {
                return;
            };
            if element != literal {
                diag.error_with_help(
                    *value,
                    format!(
                        "`{}` fills a buffer of `{element}` with a `{literal}` value",
                        node.name
                    ),
                    format!("write the value as a `{element}` (suffix `{element}`, or none)"),
                );
            }
        }
        _ => {}
    }
}

/// A copy or fill that writes a slice the graph binds read-only
/// (`&CudaSlice<T>`): the runtime would refuse it when the graph is built.
/// And, in a named graph, a fill's destination written as a reference
/// (`fill &mut x = ..`).
fn check_read_only_destination(
    model: &Model<'_>,
    node: &crate::model::Node<'_>,
    diag: &Diagnostics,
) {
    let (dst, what) = match &node.op {
        Op::Copy { dst, .. } => {
            if let Some((name, crate::model::HostMemory::ReadOnly(ty))) = model.host_memory(dst) {
                let writable = ty.replacen('&', "&mut ", 1);
                diag.error_with_help(
                    *dst,
                    format!(
                        "`{name}` is read-only host memory (`{ty}`), but `{}` copies into it",
                        node.name
                    ),
                    format!("take `{name}: {writable}` to let the graph write it"),
                );
                return;
            }
            (*dst, "copies into it")
        }
        Op::Fill {
            dst: syn::Expr::Reference(reference),
            ..
        } if model.def.name.is_some() => {
            // In a named graph a buffer is a `Buf`, never borrowed (the
            // expression form borrows the caller's slices: `fill &mut x`);
            // rustc would also offer `&mut &mut x` for it.
            // `&*x` and `&mut *x` are `x` too.
            let bare = crate::model::through_deref(&reference.expr).0;
            diag.error_with_help(
                reference.and_token,
                "a fill's destination is the buffer itself, not a reference to it",
                format!(
                    "write `fill {} = ..`: a fill node writes its destination",
                    quote::ToTokens::to_token_stream(bare)
                ),
            );
            return;
        }
        Op::Fill { dst, .. } => (*dst, "fills it"),
        _ => return,
    };
    if let Some(name) = model.read_only_param(dst) {
        diag.error_with_help(
            dst,
            format!(
                "`{name}` is bound read-only (`&CudaSlice`), but `{}` {what}",
                node.name
            ),
            format!("take `{name}: &mut CudaSlice<..>` to let the graph write it"),
        );
    }
}
