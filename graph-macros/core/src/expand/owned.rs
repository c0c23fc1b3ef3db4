//! Device buffers the graph owns (`buffer name: T[len];`) in the item form:
//! made once by `build` (`Graph::add_buffer`) and kept by `rebuild` (a
//! rebuild shares the graph's buffers, so an update keeps their contents),
//! handed to the caller in the bound struct, and lent out by the exec's
//! accessor of the same name (`Exec::buffer`).

use super::level::{alloc_len, internal};
use super::Runtime;
use crate::model::Model;
use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

/// The pieces of the item's expansion for its device buffers; all empty
/// when it has none (the expansion is then as without the construct).
pub(super) struct DeviceBuffers {
    /// `__build`'s parameter: the bound struct of the build to reuse.
    pub reuse_param: TokenStream,
    /// `build`'s and `rebuild`'s arguments for it.
    pub reuse_none: TokenStream,
    pub reuse_self: TokenStream,
    /// In `__build`, before the nodes: each buffer's `Buf`.
    pub make: Vec<TokenStream>,
    pub bound_fields: Vec<TokenStream>,
    pub bound_values: Vec<TokenStream>,
    /// The exec's copy of the bound struct, and its updates.
    pub exec_field: TokenStream,
    pub exec_init: TokenStream,
    pub exec_update: TokenStream,
    pub accessors: Vec<TokenStream>,
}

pub(super) fn device_buffers(
    model: &Model<'_>,
    graph_var: &Ident,
    bound_name: &Ident,
    bound_copy: &TokenStream,
    rt: &Runtime,
) -> DeviceBuffers {
    let decls = &model.device_buffers;
    let reuse = internal("__reuse");
    let mut out = DeviceBuffers {
        reuse_param: TokenStream::new(),
        reuse_none: TokenStream::new(),
        reuse_self: TokenStream::new(),
        make: Vec::new(),
        bound_fields: Vec::new(),
        bound_values: Vec::new(),
        exec_field: TokenStream::new(),
        exec_init: TokenStream::new(),
        exec_update: TokenStream::new(),
        accessors: Vec::new(),
    };
    if decls.is_empty() {
        return out;
    }
    out.reuse_param = quote!(#reuse: ::core::option::Option<&#bound_name<'a>>,);
    out.reuse_none = quote!(::core::option::Option::None,);
    out.reuse_self = quote!(::core::option::Option::Some(&self.bound),);
    out.exec_field = quote!(owned: #bound_name<'a>,);
    out.exec_init = quote!(owned: self.bound #bound_copy,);
    out.exec_update = quote!(self.owned = graph.bound #bound_copy;);
    for decl in decls {
        let (name, ty) = (&decl.name, &decl.ty);
        let len = alloc_len(&decl.len, rt);
        out.make.push(quote! {
            let #name = match #reuse {
                ::core::option::Option::Some(built) => built.#name,
                ::core::option::Option::None => #graph_var.add_buffer::<#ty>(#len)?,
            };
        });
        out.bound_fields.push(quote!(pub #name: #rt::Buf<'a, #ty>));
        out.bound_values.push(quote!(#name));
        let doc = format!(
            "The device buffer `{name}`, lent out between launches: read, write or zero it from the host, ordered with the launches ({}).",
            rt.doc_link("Exec::buffer")
        );
        out.accessors.push(quote! {
            #[doc = #doc]
            pub fn #name(&mut self) -> #rt::Result<#rt::OwnedMut<'_, 'a, #ty>> {
                self.exec.buffer(self.owned.#name)
            }
        });
    }
    out
}
