//! Compile-time checks the expansion puts at the user's tokens, where only
//! rustc knows the answer (whether a kernel's parameter writes). Each is a
//! trait bound that holds for a reading parameter only, with the rule as
//! the trait's `on_unimplemented` message, so a breach reads as rustc's
//! own error at the argument:
//!   error[E0277]: data race on `x`: `a` writes it while `b` ...

use super::Runtime;
use crate::check::Topology;
use crate::model::{Model, Op};
use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::spanned::Spanned;

/// What one check says when the parameter writes.
struct Rule<'r> {
    /// The trait's name in rustc's help lines.
    name: &'static str,
    message: &'r str,
    label: &'r str,
    note: &'r str,
}

/// That parameter `index` of kernel `path` only reads (or that parameter
/// `unless` writes: another check reports the pair), or `rule`'s error at
/// `span` (the argument).
fn reads_only(
    rt: &Runtime,
    (path, index): (&syn::Path, usize),
    unless: Option<(&syn::Path, usize)>,
    span: Span,
    rule: Rule<'_>,
) -> TokenStream {
    let rt = rt.at(span);
    let index = syn::Index::from(index);
    let unless = unless.map(|(path, index)| {
        let index = syn::Index::from(index);
        quote_spanned! {span=> && !#rt::__private::param_writes::<#path, #index>() }
    });
    let Rule {
        name,
        message,
        label,
        note,
    } = rule;
    let name = syn::Ident::new(name, span);
    // The user's tokens (the kernel's path) are outside the block that
    // declares the trait, so they cannot name it.
    quote_spanned! {span=>
        const _: () = {
            const WRITES: bool = #rt::__private::param_writes::<#path, #index>() #unless;
            {
                #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
                trait #name {
                    const HOLDS: () = ();
                }
                impl #name for #rt::kernel::ReadingParameter {}
                <<#rt::__private::Bool<WRITES> as #rt::__private::ParameterAccess>::Kind as #name>::HOLDS
            }
        };
    }
}

/// That the kernel arguments the checker found unordered with another
/// access of their buffer are read-only parameters.
pub fn race_checks(model: &Model<'_>, topology: &Topology, rt: &Runtime) -> TokenStream {
    let mut out = TokenStream::new();
    for race in &topology.kernel_races {
        let Op::Kernel(k) = model.nodes[race.node].op else {
            continue;
        };
        let Some(arg) = k.args.iter().nth(race.index) else {
            continue;
        };
        let rule = Rule {
            name: "NoDataRace",
            message: &race.message,
            label: &race.label,
            note: &race.help,
        };
        let unless = race
            .unless_writes
            .and_then(|(node, index)| match model.nodes[node].op {
                Op::Kernel(peer) => Some((&peer.function, index)),
                _ => None,
            });
        out.extend(reads_only(
            rt,
            (&k.function, race.index),
            unless,
            arg.span(),
            rule,
        ));
    }
    out
}

/// That no slice the graph binds read-only reaches a kernel parameter
/// that writes.
pub fn read_only_checks(model: &Model<'_>, rt: &Runtime) -> TokenStream {
    let mut out = TokenStream::new();
    for node in &model.nodes {
        let Op::Kernel(k) = node.op else {
            continue;
        };
        for (i, arg) in k.args.iter().enumerate() {
            let (message, note, name) = if let Some(name) = model.read_only_param(arg) {
                (
                    format!("`{name}` is bound read-only (`&CudaSlice`), but this parameter of the kernel writes it"),
                    format!("take `{name}: &mut CudaSlice<..>` to let the graph write it"),
                    name.to_string(),
                )
            } else if let Some(name) = shared_operand(model, arg) {
                (
                    format!("`{name}` is passed shared (`&{name}`), but this parameter of the kernel writes it"),
                    format!("pass `&mut {name}` to let the graph write it"),
                    name,
                )
            } else {
                continue;
            };
            let label = format!("the kernel writes `{name}` through this parameter");
            let rule = Rule {
                name: "ReadOnlyBinding",
                message: &message,
                label: &label,
                note: &note,
            };
            out.extend(reads_only(rt, (&k.function, i), None, arg.span(), rule));
        }
    }
    out
}

/// In the expression form, an operand written `&x` (bound read-only): its
/// text.
fn shared_operand(model: &Model<'_>, arg: &syn::Expr) -> Option<String> {
    model.def.context.as_ref()?;
    match arg {
        syn::Expr::Reference(r) if r.mutability.is_none() => {
            Some(quote::ToTokens::to_token_stream(&r.expr).to_string())
        }
        _ => None,
    }
}
