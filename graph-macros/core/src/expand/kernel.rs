//! A kernel node's statement: each argument checked against its
//! parameter at the argument's tokens, the launch configuration, the
//! dependencies (with their edge kinds where any is not full) and the call
//! to `Graph::__add_kernel`, which keeps a failure for the next settle.

use super::level::{internal, Emitter};
use super::repeat_deps::edge_kind;
use crate::model::NodeId;
use crate::parse::{EdgeKind, KernelNode};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::Ident;

/// The most parameters a kernel declaration has (the runtime's tuples).
const MAX_KERNEL_PARAMS: usize = 12;

impl Emitter<'_, '_> {
    /// Statements adding kernel node `id` (`k`) to the graph variable `g`.
    pub(super) fn kernel_node(&self, id: NodeId, k: &KernelNode, g: &Ident) -> TokenStream {
        let rt = self.rt;
        let node = &self.model.nodes[id];
        let var = super::Moved::from(self.node_binding(id));
        let dep_list = self.dep_list(id);
        // (Kinds and spans first: `deps` takes the list.)
        let incoming: Vec<(EdgeKind, Option<Span>)> =
            dep_list.iter().map(|d| (d.kind, d.span)).collect();
        let dynamic = !Self::static_deps(&dep_list);
        // A direct or assembled list is built below; a fixed one here.
        let direct = self.direct(&dep_list);
        let deps = (direct.is_none() && !dynamic).then(|| self.deps(id, dep_list));
        let kernel_label = self.kernel_label_expr(id);
        let path = &k.function;
        let kernel_var = self.kernel_var(id);
        let loaded = self.loaded_kernel(id);
        let (grid, block) = (&k.grid, &k.block);
        let config = match (u32_literal(grid), u32_literal(block)) {
            // Two `u32` literals (most nodes): no conversion can fail.
            (Some(grid), Some(block)) => {
                quote!(#rt::__private::launch(#grid, #block))
            }
            _ => {
                // Each dimension converted at its tokens: rustc's error
                // at a `usize` grid points there and names the fix. (The
                // trait's method, not `Dim3::of`: a bound of a function
                // adds a note pointing into the runtime's source.)
                let dim = |d: &syn::Expr| {
                    let rt = rt.at(d.span());
                    super::Moved::from(quote_spanned!(d.span()=> #rt::kernel::LaunchDim::dim(#d)))
                };
                let (grid, block) = (dim(grid), dim(block));
                quote!(#rt::LaunchConfig::new(#grid, #block))
            }
        };
        let config = match &k.shared_mem {
            Some(smem) => {
                let config = super::Moved::from(config);
                // Typed at its tokens: rustc's error at a `usize` size
                // points there, not at the whole invocation.
                let span = smem.span();
                let smem = super::Moved::from(quote_spanned!(span=> {
                    let __shared_mem: u32 = #smem;
                    __shared_mem
                }));
                quote!(#config.with_shared_mem(#smem))
            }
            None => config,
        };
        // Each argument is checked on its own against the declared
        // parameter, so rustc points at the argument:
        //   error[E0308]: mismatched types ... expected `Buf<'_, f32>`, found `u32`
        let arg_vars: Vec<Ident> = (0..k.args.len()).map(arg_var).collect();
        let arg_checks = k.args.iter().enumerate().map(|(i, arg)| {
            let var = &arg_vars[i];
            let index = syn::Index::from(i);
            let span = arg.span();
            let arg = super::Moved::from(self.operand(arg));
            let rt = rt.at(span);
            quote_spanned! {span=>
                let #var: #rt::__private::ArgOf<'_, #path, #index> = #arg;
            }
        });
        let arg_checks = arg_checks.map(super::Moved::from);
        // Every programmatic edge requires a PDL-aware kernel after
        // it; rustc's error points at the edge:
        //   error[E0277]: kernel `AddOne` is not declared PDL-aware, ...
        let pdl_checks = incoming.iter().filter_map(|&(kind, span)| {
            let span = span.filter(|_| kind != EdgeKind::Full)?;
            let path = super::respan(path.to_token_stream(), span);
            let rt = rt.at(span);
            Some(quote_spanned! {span=>
                let () = <#path as #rt::kernel::PdlAware>::DECLARED;
            })
        });
        let kinds: Vec<EdgeKind> = incoming.iter().map(|&(kind, _)| kind).collect();
        let dynamic_var = internal("__deps");
        let (deps_decl, deps, edges) = if let Some(direct) = direct {
            let (dynamic, direct) = (&dynamic_var, super::Moved::from(direct));
            (
                Some(quote! { let #dynamic: &[#rt::Node] = #direct; }),
                Some(quote!(#dynamic)),
                None,
            )
        } else if dynamic {
            let dynamic = &dynamic_var;
            let value = super::Moved::from(self.deps_value(id));
            // Kinds are kept (`Deps::push_kind`) only when some edge
            // is not full.
            let edges =
                (!kinds.iter().all(|k| *k == EdgeKind::Full)).then(|| quote!(, #dynamic.edges()));
            (
                Some(quote! { let #dynamic = #value; }),
                Some(quote!(#dynamic.as_slice())),
                edges,
            )
        } else if kinds.iter().all(|k| *k == EdgeKind::Full) {
            (None, deps, None)
        } else {
            let kinds = kinds.iter().map(|&k| edge_kind(k, rt));
            (
                None,
                deps,
                Some(quote!(, ::core::option::Option::Some(&[#(#kinds),*]))),
            )
        };
        let failed = internal("__failed");
        // The typed handle, made anew at each use (cheaper than a copy).
        let handle = || {
            if self.in_place(id) {
                let nodes = internal("__nodes");
                let field = super::Moved::from(self.table_field(id));
                quote!(#nodes.#field)
            } else {
                kernel_var.to_token_stream()
            }
        };
        let priority = node.attrs.priority.as_ref().map(|(_, p)| {
            let handle = super::Moved::from(handle());
            quote! {
                #rt::__private::settle(&mut #failed)?;
                #g.set_priority(&#handle, #p)?;
            }
        });
        let accessor = self.body_handles && self.has_accessor(id);
        let keep_kernel = accessor || priority.is_some() || self.is_dependency(id);
        let target = if self.in_place(id) {
            handle()
        } else if keep_kernel {
            quote!(let #kernel_var)
        } else {
            quote!(let _)
        };
        let node_handle = self.is_dependency(id).then(|| {
            let handle = super::Moved::from(handle());
            quote! { let #var = #handle.node(); }
        });
        // The argument list as the kernel's parameter tuple, through
        // `GivenN` for N arguments, so another count is an error at
        // the user's parentheses naming the kernel and its parameters:
        //   error[E0277]: kernel `AddOne` takes the parameters `(Out<f32>, Len)`, not 1 argument
        let args = internal("__args");
        let parens = k.paren.span.join();
        let rt_here = rt.at(parens);
        let args_check = if arg_vars.len() <= MAX_KERNEL_PARAMS {
            let given = quote::format_ident!("Given{}", arg_vars.len(), span = parens);
            quote_spanned! {parens=>
                let #args = <<#path as #rt_here::kernel::KernelDef>::Args
                    as #rt_here::kernel::#given<#path>>::args((#(#arg_vars,)*));
            }
        } else {
            quote_spanned! {parens=>
                let #args: #rt_here::__private::ArgsOf<'_, #path> = (#(#arg_vars,)*);
            }
        };
        // Only full edges (most nodes): no kinds to pass.
        let add_kernel = match edges.is_none() {
            true => Ident::new("__add_kernel", Span::call_site()),
            false => Ident::new("__add_kernel_with_edges", Span::call_site()),
        };
        let [target, args_check, config] = [target, args_check, config].map(super::Moved::from);
        let kernel_label = super::Moved::from(kernel_label);
        let [deps_decl, deps, edges] = [deps_decl, deps, edges].map(super::Moved::from);
        let (node_handle, priority) = (
            super::Moved::from(node_handle),
            super::Moved::from(priority),
        );
        quote! {
            #target = {
                #(#pdl_checks)*
                #(#arg_checks)*
                #args_check
                #deps_decl
                #g.#add_kernel(&mut #failed, #kernel_label, #loaded, #config, #args, #deps #edges)
            };
            #node_handle
            #priority
        }
    }
}

/// A launch dimension written as an unsuffixed integer literal that fits
/// a `u32` (or suffixed `u32`): the literal.
fn u32_literal(dim: &syn::Expr) -> Option<&syn::LitInt> {
    match dim {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(int),
            attrs,
        }) if attrs.is_empty()
            && matches!(int.suffix(), "" | "u32")
            && int.base10_parse::<u32>().is_ok() =>
        {
            Some(int)
        }
        _ => None,
    }
}

/// The variable holding a kernel node's argument `i` (`__arg{i}`), named
/// without formatting for the first few (most kernels).
fn arg_var(i: usize) -> Ident {
    const NAMES: [&str; 8] = [
        "__arg0", "__arg1", "__arg2", "__arg3", "__arg4", "__arg5", "__arg6", "__arg7",
    ];
    match NAMES.get(i) {
        Some(name) => internal(name),
        None => format_ident!("__arg{}", i, span = Span::mixed_site()),
    }
}
