//! What a named graph with errors expands to: the items a caller names
//! (the graph and exec types, their methods, the bound buffers, one
//! accessor per kernel, copy and fill node) with bodies never reached, so
//! that the errors shown are the checker's, not "no method named ..." at
//! every use. The crate does not compile either way.

use super::item::Names;
use super::level::internal;
use super::param_types::{list_element, slice_element, with_lifetime};
use super::Runtime;
use crate::parse::{Block, GraphDef, NodeKind, Stmt};
use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

pub fn fallback(def: &GraphDef, rt: &Runtime) -> TokenStream {
    let Some(name) = &def.name else {
        return TokenStream::new();
    };
    let names = Names::new(name);
    let (vis, exec_name, bound_name) = (&def.vis, &names.exec, &names.bound);
    let ctx = internal("ctx");
    let params = def.params.iter().map(|p| {
        let (n, t) = (&p.name, with_lifetime(&p.ty));
        quote!(#n: #t)
    });
    let rebuild_params = def.params.iter().map(|p| {
        let n = &p.name;
        match (slice_element(&p.ty), list_element(&p.ty)) {
            (Some(elem), _) => quote!(#n: #rt::Buf<'a, #elem>),
            (_, Some(elem)) => quote!(#n: &[#rt::Buf<'a, #elem>]),
            _ => {
                let t = with_lifetime(&p.ty);
                quote!(#n: #t)
            }
        }
    });
    let mut bound_fields = Vec::new();
    let mut bound_names: Vec<String> = def.params.iter().map(|p| p.name.to_string()).collect();
    for p in &def.params {
        let n = &p.name;
        if let Some(elem) = slice_element(&p.ty) {
            bound_fields.push(quote!(pub #n: #rt::Buf<'a, #elem>));
        } else if let Some(elem) = list_element(&p.ty) {
            bound_fields.push(quote!(pub #n: ::std::vec::Vec<#rt::Buf<'a, #elem>>));
        }
    }
    let mut accessors = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    walk(
        &def.body,
        &mut Vec::new(),
        &mut |stmt, vars| match &stmt.kind {
            NodeKind::Kernel(_) | NodeKind::Copy { .. } | NodeKind::Fill { .. } => {
                let label = &stmt.label;
                // A label named like an exec method was reported; its accessor
                // would be a second definition.
                let clashes = crate::check::EXEC_METHODS.contains(&label.to_string().as_str());
                if clashes || seen.contains(&label.to_string()) {
                    return;
                }
                seen.push(label.to_string());
                // Parameters by position: a loop variable named twice was
                // reported, and would be a parameter named twice.
                let vars = (0..vars.len()).map(|i| quote::format_ident!("i{}", i));
                accessors.push(quote! {
                    pub fn #label(&mut self, #(#vars: usize),*) -> #rt::__private::Unchecked {
                        ::core::unreachable!("cuda_graph! reported errors")
                    }
                });
            }
            NodeKind::Alloc { ty, .. }
                if stmt.attrs.iter().any(|a| a.path().is_ident("escape")) =>
            {
                // One field a name (a clash with a parameter or another
                // escaping allocation was reported).
                let label = &stmt.label;
                if !bound_names.contains(&label.to_string()) {
                    bound_names.push(label.to_string());
                    bound_fields.push(quote!(pub #label: #rt::Buf<'a, #ty>));
                }
            }
            _ => {}
        },
    );
    // Graph-owned buffers: a bound field and an exec accessor each (a
    // clash with a parameter, a node or another buffer was reported).
    for stmt in &def.body.stmts {
        let (name, field, accessor, args) = match stmt {
            Stmt::Host(decl) => {
                let ty = &decl.ty;
                (
                    &decl.name,
                    quote!(#rt::HostBuf<#ty>),
                    quote!(&mut [#ty]),
                    quote!(),
                )
            }
            Stmt::Buffer(decl) => {
                let ty = &decl.ty;
                (
                    &decl.name,
                    quote!(#rt::Buf<'a, #ty>),
                    quote!(#rt::OwnedMut<'_, 'a, #ty>),
                    quote!(),
                )
            }
            _ => continue,
        };
        let clashes = crate::check::EXEC_METHODS.contains(&name.to_string().as_str());
        if clashes || bound_names.contains(&name.to_string()) || seen.contains(&name.to_string()) {
            continue;
        }
        bound_names.push(name.to_string());
        seen.push(name.to_string());
        bound_fields.push(quote!(pub #name: #field));
        accessors.push(quote! {
            pub fn #name(&mut self #args) -> #rt::Result<#accessor> {
                ::core::unreachable!("cuda_graph! reported errors")
            }
        });
    }
    // Top-level conditional handles: a bound field each, after the buffers
    // (a clash with one was reported; the buffer keeps its accessor).
    for stmt in &def.body.stmts {
        if let Stmt::Cond(decl) = stmt {
            let name = &decl.name;
            if !bound_names.contains(&name.to_string()) && !name.to_string().starts_with("__") {
                bound_names.push(name.to_string());
                bound_fields.push(quote!(pub #name: #rt::CondHandle));
            }
        }
    }
    let unreached = quote!(::core::unreachable!("cuda_graph! reported errors"));
    quote! {
        #vis struct #name<'a>(::core::marker::PhantomData<&'a ()>);
        #vis struct #exec_name<'a>(::core::marker::PhantomData<&'a ()>);
        #[derive(Debug, Clone)]
        #vis struct #bound_name<'a> {
            #(#bound_fields,)*
            #[doc(hidden)]
            pub __borrow: ::core::marker::PhantomData<&'a ()>,
        }
        #[allow(unused_variables, clippy::too_many_arguments)]
        impl<'a> #name<'a> {
            pub const LABELS: &'static [&'static str] = &[];
            pub const DOT: &'static str = "";
            pub const OPTIONS: #rt::InstantiateOptions<'static> = #rt::InstantiateOptions::new();
            pub fn build(
                #ctx: &::std::sync::Arc<#rt::cudarc::driver::CudaContext>,
                #(#params),*
            ) -> #rt::Result<Self> { #unreached }
            pub fn rebuild(&self, #(#rebuild_params),*) -> #rt::Result<Self> { #unreached }
            pub fn bound(&self) -> #bound_name<'a> { #unreached }
            pub fn graph(&self) -> &#rt::Graph<'a> { #unreached }
            pub fn graph_mut(&mut self) -> &mut #rt::Graph<'a> { #unreached }
            pub fn into_graph(self) -> #rt::Graph<'a> { #unreached }
            pub fn instantiate(&self) -> #rt::Result<#exec_name<'a>> { #unreached }
            pub fn instantiate_with(
                &self,
                options: &#rt::InstantiateOptions<'_>,
            ) -> #rt::Result<#exec_name<'a>> { #unreached }
        }
        impl<'a> #rt::__private::IntoChild<'a> for #name<'a> {
            fn into_child(self) -> #rt::Graph<'a> { #unreached }
        }
        #[allow(unused_variables)]
        impl<'a> #exec_name<'a> {
            pub fn launch(&mut self, stream: &::std::sync::Arc<#rt::cudarc::driver::CudaStream>) -> #rt::Result<()> { #unreached }
            pub fn launch_on_own_stream(&mut self) -> #rt::Result<()> { #unreached }
            pub fn upload(&mut self, stream: &#rt::cudarc::driver::CudaStream) -> #rt::Result<()> { #unreached }
            pub fn update(&mut self, graph: &#name<'a>) -> #rt::Result<#rt::UpdateOutcome> { #unreached }
            pub fn synchronize(&mut self) -> #rt::Result<()> { #unreached }
            pub fn bound_mut<T: 'static>(
                &mut self,
                buf: #rt::Buf<'a, T>,
            ) -> #rt::Result<#rt::BoundMut<'_, 'a, T>> { #unreached }
            pub fn take_escaped<T>(&mut self, buf: #rt::Buf<'a, T>) -> #rt::Result<#rt::Escaped<T>> { #unreached }
            pub fn exec(&mut self) -> &mut #rt::Exec<'a> { #unreached }
            pub fn device_handle(&self) -> #rt::Result<#rt::DeviceExec<'_>> { #unreached }
            #(#accessors)*
        }
    }
}

/// The kernel paths the graph names, named once each in an item never
/// used: an import that only a graph with errors uses (`use kernels::*`)
/// is then not also reported unused, and a path that does not resolve is
/// reported now, once, not in the next round.
pub fn kernels_named(def: &GraphDef) -> TokenStream {
    let mut kernels: Vec<&syn::Path> = Vec::new();
    collect_kernels(&def.body, &mut kernels);
    for stmt in &def.body.stmts {
        if let Stmt::Fragment(fragment) = stmt {
            collect_kernels(&fragment.body, &mut kernels);
        }
    }
    let (mut paths, mut seen): (Vec<&syn::Path>, Vec<String>) = (Vec::new(), Vec::new());
    for path in kernels {
        let text = quote!(#path).to_string();
        if !seen.contains(&text) {
            seen.push(text);
            paths.push(path);
        }
    }
    if paths.is_empty() {
        return TokenStream::new();
    }
    quote! {
        #[allow(dead_code)]
        const _: () = {
            fn kernels_named() {
                #(let _ = ::core::marker::PhantomData::<#paths>;)*
            }
        };
    }
}

/// Calls `visit` for every node statement of `block` and the blocks in it
/// (not fragments: their nodes have no accessor), with the loop variables
/// of the repeated blocks around it.
fn walk<'s>(
    block: &'s Block,
    vars: &mut Vec<&'s Ident>,
    visit: &mut impl FnMut(&'s crate::parse::NodeStmt, &[&'s Ident]),
) {
    for stmt in &block.stmts {
        match stmt {
            Stmt::Node(node) => {
                visit(node, vars);
                match &node.kind {
                    NodeKind::If {
                        then_body,
                        else_body,
                        ..
                    } => {
                        walk(then_body, vars, visit);
                        if let Some(body) = else_body {
                            walk(body, vars, visit);
                        }
                    }
                    NodeKind::While { body, .. } => walk(body, vars, visit),
                    NodeKind::Switch { arms, .. } => {
                        for arm in arms {
                            walk(&arm.body, vars, visit);
                        }
                    }
                    _ => {}
                }
            }
            Stmt::Scope(scope) => walk(&scope.body, vars, visit),
            Stmt::Repeat(repeat) => {
                vars.push(&repeat.var);
                walk(&repeat.body, vars, visit);
                vars.pop();
            }
            Stmt::Edge(_)
            | Stmt::Cond(_)
            | Stmt::Host(_)
            | Stmt::Buffer(_)
            | Stmt::Fragment(_)
            | Stmt::Place(_) => {}
        }
    }
}

/// The kernel paths of `block`'s nodes, bodies included.
fn collect_kernels<'s>(block: &'s Block, out: &mut Vec<&'s syn::Path>) {
    walk(block, &mut Vec::new(), &mut |stmt, _| {
        if let NodeKind::Kernel(kernel) = &stmt.kind {
            out.push(&kernel.function);
        }
    });
}
