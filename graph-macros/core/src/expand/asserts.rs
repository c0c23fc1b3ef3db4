//! Const assertions the expansion puts at the user's tokens, where only
//! rustc knows the answer (whether a kernel's parameter writes).

use super::Runtime;
use crate::check::Topology;
use crate::model::{Model, Op};
use proc_macro2::TokenStream;
use quote::quote_spanned;
use syn::spanned::Spanned;

/// Const assertions that the kernel arguments the checker found unordered
/// with another access of their buffer are read-only parameters (rustc
/// knows the kernel's parameters; the error points at the argument):
///   error[E0080]: evaluation panicked: data race on `x`: ...
pub fn race_checks(model: &Model<'_>, topology: &Topology, rt: &Runtime) -> TokenStream {
    let mut out = TokenStream::new();
    for race in &topology.kernel_races {
        let Op::Kernel(k) = model.nodes[race.node].op else {
            continue;
        };
        let Some(arg) = k.args.iter().nth(race.index) else {
            continue;
        };
        let (path, index, message) = (&k.function, syn::Index::from(race.index), &race.message);
        let rt = rt.at(arg.span());
        out.extend(quote_spanned! {arg.span()=>
            const _: () = ::core::assert!(!#rt::__private::param_writes::<#path, #index>(), #message);
        });
    }
    out
}

/// Module-level checks that no slice the graph binds read-only reaches a
/// kernel parameter that writes (rustc evaluates them when checking, and
/// points at the argument):
///   error[E0080]: evaluation panicked: `x` is bound read-only ...
pub fn read_only_checks(model: &Model<'_>, rt: &Runtime) -> TokenStream {
    let mut out = TokenStream::new();
    for node in &model.nodes {
        let Op::Kernel(k) = node.op else {
            continue;
        };
        let path = &k.function;
        for (i, arg) in k.args.iter().enumerate() {
            let Some(name) = model.read_only_param(arg) else {
                continue;
            };
            let index = syn::Index::from(i);
            let message = format!(
                "`{name}` is bound read-only (`&CudaSlice`), but this parameter of the kernel writes it: take `{name}: &mut CudaSlice<..>`"
            );
            let span = syn::spanned::Spanned::span(arg);
            let rt = rt.at(span);
            out.extend(quote::quote_spanned! {span=>
                const _: () = ::core::assert!(!#rt::__private::param_writes::<#path, #index>(), #message);
            });
        }
    }
    out
}
