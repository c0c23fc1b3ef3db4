//! Compile-time checks the expansion puts at the user's tokens, where only
//! rustc knows the answer (whether a kernel's parameter writes). Each is a
//! trait bound that holds for a reading parameter only, with the rule as
//! the trait's `on_unimplemented` message, so a breach reads as rustc's
//! own error at the argument:
//!   error[E0277]: data race on `x`: `a` writes it while `b` ...

use super::Runtime;
use crate::check::Topology;
use crate::model::{argument_field, argument_values, Model, Op};
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

/// Whether the parameter a kernel argument goes to writes: parameter
/// `index` of kernel `path`, or for field `field` of a struct literal
/// argument (`kernel_struct!`), that field's parameter type.
fn writes(
    rt: &Runtime,
    path: &syn::Path,
    arg: &syn::Expr,
    index: usize,
    field: Option<usize>,
    span: Span,
) -> TokenStream {
    let rt = rt.at(span);
    let field = field.and_then(|j| argument_field(arg, j));
    if let (Some(f), syn::Expr::Struct(literal)) = (field, arg) {
        let struct_path = &literal.path;
        let name = match &f.member {
            syn::Member::Named(ident) => ident.to_string(),
            syn::Member::Unnamed(index) => index.index.to_string(),
        };
        return quote_spanned! {span=> #struct_path::__field_writes(#name) };
    }
    let index = syn::Index::from(index);
    quote_spanned! {span=> #rt::__private::param_writes::<#path, #index>() }
}

/// That the parameter `writes` says only reads (or that another one,
/// `unless`, writes: another check reports the pair), or `rule`'s error
/// at `span` (the argument).
fn reads_only(
    rt: &Runtime,
    writes: TokenStream,
    unless: Option<TokenStream>,
    span: Span,
    rule: Rule<'_>,
) -> TokenStream {
    let rt = rt.at(span);
    let unless = unless.map(|other| {
        let other = super::Moved::from(other);
        quote_spanned! {span=> && !#other }
    });
    let (writes, unless) = (super::Moved::from(writes), super::Moved::from(unless));
    let Rule {
        name,
        message,
        label,
        note,
    } = rule;
    let name = syn::Ident::new(name, span);
    // Raw literals: escaping three sentences per check char by char cost
    // the macro more than the rest of the check.
    let [message, label, note] = [message, label, note].map(super::raw_str_literal);
    // The user's tokens (the kernel's path) are outside the block that
    // declares the trait, so they cannot name it.
    quote_spanned! {span=>
        const _: () = {
            const WRITES: bool = #writes #unless;
            {
                #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
                trait #name {
                    const HOLDS: () = ();
                }
                impl #name for #rt::kernel::ReadingParameter {}
                <#rt::__private::Access<WRITES> as #name>::HOLDS
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
        // Reported at the racing field's value, for a struct literal.
        let at = race
            .field
            .and_then(|j| argument_field(arg, j))
            .map_or(arg.span(), |f| f.expr.span());
        let rule = Rule {
            name: "NoDataRace",
            message: &race.message,
            label: &race.label,
            note: &race.help,
        };
        let unless =
            race.unless_writes
                .and_then(|(node, index, field)| match model.nodes[node].op {
                    Op::Kernel(peer) => {
                        let peer_arg = peer.args.iter().nth(index)?;
                        Some(writes(rt, &peer.function, peer_arg, index, field, at))
                    }
                    _ => None,
                });
        let writes = writes(rt, &k.function, arg, race.index, race.field, at);
        out.extend(reads_only(rt, writes, unless, at, rule));
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
        let values = k.args.iter().enumerate().flat_map(|(i, whole)| {
            argument_values(whole)
                .into_iter()
                .map(move |(field, value)| (i, whole, field, value))
        });
        for (i, whole, field, arg) in values {
            let (message, note, name) = if let Some(name) = model.read_only_param(arg) {
                (
                    format!("`{name}` is bound read-only (`&CudaSlice`), but this parameter of the kernel writes it"),
                    format!("take `{name}: &mut CudaSlice<..>` to let the graph write it"),
                    name.to_string(),
                )
            } else if let Some((name, shared, exclusive)) = shared_operand(model, arg) {
                (
                    format!("`{name}` is passed shared (`{shared}`), but this parameter of the kernel writes it"),
                    format!("pass `{exclusive}` to let the graph write it"),
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
            let writes = writes(rt, &k.function, whole, i, field, arg.span());
            out.extend(reads_only(rt, writes, None, arg.span(), rule));
        }
    }
    out
}

/// In the expression form, an operand written `&x` or `&*x` (bound
/// read-only): the name to report, the operand as written, and how to
/// write it to let the graph write it.
fn shared_operand(model: &Model<'_>, arg: &syn::Expr) -> Option<(String, String, String)> {
    model.def.context.as_ref()?;
    match arg {
        syn::Expr::Reference(r) if r.mutability.is_none() => {
            // `&*x` (through a reference) is named `x`, and made `&mut *x`.
            if let Some(place) = crate::model::place(arg).filter(|p| p.deref) {
                let (ident, prefix) = (&place.ident, crate::model::Referenced::prefix);
                return Some((
                    ident.to_string(),
                    format!("{}{ident}", prefix(false, true)),
                    format!("{}{ident}", prefix(true, true)),
                ));
            }
            let name = quote::ToTokens::to_token_stream(&r.expr).to_string();
            Some((name.clone(), format!("&{name}"), format!("&mut {name}")))
        }
        _ => None,
    }
}
