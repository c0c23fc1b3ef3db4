//! What a node does, with its operands: check and expand read a node's
//! syntax only through its `Op` (an alloc scope's alloc and free nodes
//! included, which have no statement of their own).

use super::Kind;
use crate::parse::{self, kw, KernelNode, SwitchArm};
use syn::{Expr, ExprClosure, Ident, Type};

/// A host node closure's parameter: the host buffer (`host y: T[n];`) it
/// reads (`|y: &[T]|`, or `|y|`) or writes (`|y: &mut [T]|`).
#[derive(Debug, Clone, Copy)]
pub struct HostParam<'a> {
    pub name: &'a Ident,
    pub write: bool,
    /// The element type it is written with (`T` of `&[T]`), if any.
    pub elem: Option<&'a Type>,
}

/// The host buffer a host node's closure takes, if it takes one; an error
/// (at the tokens, with its message) for a parameter list the node cannot
/// take.
pub fn host_param(closure: &Expr) -> Result<Option<HostParam<'_>>, (&dyn quote::ToTokens, String)> {
    let Expr::Closure(closure) = closure else {
        return Ok(None);
    };
    let mut inputs = closure.inputs.iter();
    let Some(first) = inputs.next() else {
        return Ok(None);
    };
    if let Some(second) = inputs.next() {
        return Err((
            second,
            "a host node's closure takes one host buffer at most".to_string(),
        ));
    }
    let (pat, write, elem) = match first {
        syn::Pat::Type(typed) => match &*typed.ty {
            Type::Reference(r) => {
                let elem = match &*r.elem {
                    Type::Slice(slice) => Some(&*slice.elem),
                    _ => None,
                };
                (&*typed.pat, r.mutability.is_some(), elem)
            }
            other => {
                return Err((
                    other,
                    "a host buffer parameter is `&[T]` (read) or `&mut [T]` (written)".to_string(),
                ))
            }
        },
        other => (other, false, None),
    };
    match pat {
        syn::Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
            Ok(Some(HostParam {
                name: &ident.ident,
                write,
                elem,
            }))
        }
        other => Err((
            other,
            "a host node's closure parameter names the host buffer it uses (`|y: &[f32]|`)"
                .to_string(),
        )),
    }
}

/// The values a kernel argument passes: the argument itself, or for a
/// struct literal (`kernel_struct!`) each field's value with its position
/// in the literal (each field is checked as an argument of its own).
pub fn argument_values(arg: &Expr) -> Vec<(Option<usize>, &Expr)> {
    match arg {
        Expr::Struct(literal) => literal
            .fields
            .iter()
            .enumerate()
            .map(|(j, f)| (Some(j), &f.expr))
            .collect(),
        _ => vec![(None, arg)],
    }
}

/// Field `j` of a struct literal argument (`kernel_struct!`).
pub fn argument_field(arg: &Expr, j: usize) -> Option<&syn::FieldValue> {
    match arg {
        Expr::Struct(literal) => literal.fields.iter().nth(j),
        _ => None,
    }
}

/// A node's operation and its operands, as the user wrote them.
#[derive(Debug, Clone, Copy)]
pub enum Op<'a> {
    Kernel(&'a KernelNode),
    Copy {
        src: &'a Expr,
        dst: &'a Expr,
    },
    Fill {
        dst: &'a Expr,
        value: &'a Expr,
    },
    Host {
        closure: &'a Expr,
        /// The host buffer its closure's parameter names, if it has one.
        param: Option<HostParam<'a>>,
    },
    Empty,
    Child {
        graph: &'a Expr,
    },
    Record {
        event: &'a Expr,
    },
    Wait {
        event: &'a Expr,
    },
    Capture {
        unsafe_token: &'a syn::Token![unsafe],
        stream: &'a Expr,
        closure: &'a ExprClosure,
    },
    /// An alloc statement's or an alloc scope's: `buffer` names it.
    Alloc {
        buffer: &'a Ident,
        ty: &'a Type,
        len: &'a Expr,
    },
    /// A free statement's or an alloc scope's end.
    Free {
        buffer: &'a Ident,
    },
    If {
        handle: &'a Ident,
    },
    While {
        handle: &'a Ident,
    },
    Switch {
        keyword: &'a kw::switch,
        handle: &'a Ident,
        arms: &'a [SwitchArm],
    },
}

impl<'a> Op<'a> {
    /// A statement's operation (`label` names an alloc statement's buffer).
    pub fn of(stmt: &'a parse::NodeStmt) -> Op<'a> {
        use parse::NodeKind as K;
        match &stmt.kind {
            K::Kernel(k) => Op::Kernel(k),
            K::Copy { src, dst, .. } => Op::Copy { src, dst },
            K::Fill { dst, value, .. } => Op::Fill { dst, value },
            K::Host { closure, .. } => Op::Host {
                closure,
                param: host_param(closure).ok().flatten(),
            },
            K::Empty { .. } => Op::Empty,
            K::Child { graph, .. } => Op::Child { graph },
            K::Record { event, .. } => Op::Record { event },
            K::Wait { event, .. } => Op::Wait { event },
            K::Capture {
                unsafe_token,
                stream,
                closure,
                ..
            } => Op::Capture {
                unsafe_token,
                stream,
                closure,
            },
            K::Alloc { ty, len, .. } => Op::Alloc {
                buffer: &stmt.label,
                ty,
                len,
            },
            K::Free { buffer, .. } => Op::Free { buffer },
            K::If { handle, .. } => Op::If { handle },
            K::While { handle, .. } => Op::While { handle },
            K::Switch {
                keyword,
                handle,
                arms,
                ..
            } => Op::Switch {
                keyword,
                handle,
                arms,
            },
        }
    }

    /// What kind of node it makes.
    pub fn kind(&self) -> Kind {
        match self {
            Op::Kernel(_) => Kind::Kernel,
            Op::Copy { .. } => Kind::Copy,
            Op::Fill { .. } => Kind::Fill,
            Op::Host { .. } => Kind::Host,
            Op::Empty => Kind::Empty,
            Op::Child { .. } => Kind::Child,
            Op::Record { .. } => Kind::Record,
            Op::Wait { .. } => Kind::Wait,
            Op::Capture { .. } => Kind::Capture,
            Op::Alloc { .. } => Kind::Alloc,
            Op::Free { .. } => Kind::Free,
            Op::If { .. } => Kind::If,
            Op::While { .. } => Kind::While,
            Op::Switch { .. } => Kind::Switch,
        }
    }

    /// The conditional node's handle.
    pub fn handle(&self) -> Option<&'a Ident> {
        match *self {
            Op::If { handle } | Op::While { handle } | Op::Switch { handle, .. } => Some(handle),
            _ => None,
        }
    }

    /// The operands that name buffers (a kernel's arguments, a copy's
    /// source and destination, a fill's destination), in source order.
    pub fn buffer_operands(&self) -> Vec<&'a Expr> {
        match *self {
            Op::Kernel(k) => k.args.iter().collect(),
            Op::Copy { src, dst } => vec![src, dst],
            Op::Fill { dst, .. } => vec![dst],
            _ => Vec::new(),
        }
    }
}
