//! `rebuild`'s own check: the buffers it takes as `Buf`s must be as
//! distinct as the borrows `build` took, which the race check relies on.

use super::level::internal;
use super::Runtime;
use proc_macro2::TokenStream;
use quote::quote;
use syn::{Ident, Type};

/// `rebuild`'s check that its buffers are as distinct as `build`'s
/// borrows made them (the race check relies on it): none where no two
/// buffers could overlap.
pub(super) fn distinct_buffers(
    model: &crate::model::Model<'_>,
    slices: &[(&Ident, Type)],
    lists: &[(&Ident, Type)],
    rt: &Runtime,
) -> TokenStream {
    let def = model.def;
    // `Buf` parameters, which the race check counts as buffers too.
    let bufs: Vec<&Ident> = def
        .params
        .iter()
        .filter(|p| matches!(&p.ty, Type::Path(t) if t.path.segments.last().is_some_and(|s| s.ident == "Buf")))
        .map(|p| &p.name)
        .collect();
    // The graph's own `buffer` declarations, which a parameter could name
    // again (`rebuild(g.bound().acc, ..)`).
    let devices: Vec<&Ident> = model.device_buffers.iter().map(|d| &d.name).collect();
    if slices.len() + bufs.len() + devices.len() + 2 * lists.len() < 2 {
        return TokenStream::new();
    }
    // Written: a `&mut` slice or list, an `Escaped` (owned), a `Buf`.
    let writes = |n: &Ident| {
        def.params
            .iter()
            .any(|p| p.name == *n && !matches!(&p.ty, Type::Reference(r) if r.mutability.is_none()))
    };
    let buffers = internal("__buffers");
    let pushes = slices.iter().map(|(n, _)| *n).chain(bufs.iter().copied()).map(|n| {
        let w = writes(n);
        quote! {
            #buffers.push(((::core::stringify!(#n), ::core::option::Option::None), #rt::__private::buffer_bytes(&#n), #w));
        }
    });
    let (index, buffer) = (internal("__index"), internal("__buffer"));
    let list_pushes = lists.iter().map(|(n, _)| {
        let w = writes(n);
        quote! {
            for (#index, #buffer) in #n.iter().enumerate() {
                #buffers.push(((::core::stringify!(#n), ::core::option::Option::Some(#index)), #rt::__private::buffer_bytes(#buffer), #w));
            }
        }
    });
    let device_pushes = devices.iter().map(|n| {
        quote! {
            #buffers.push(((::core::stringify!(#n), ::core::option::Option::None), #rt::__private::buffer_bytes(&self.bound.#n), true));
        }
    });
    quote! {
        let mut #buffers = ::std::vec::Vec::new();
        #(#pushes)*
        #(#list_pushes)*
        #(#device_pushes)*
        #rt::__private::distinct_buffers(#buffers)?;
    }
}
