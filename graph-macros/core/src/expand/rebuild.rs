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
    def: &crate::parse::GraphDef,
    slices: &[(&Ident, Type)],
    lists: &[(&Ident, Type)],
    name: &Ident,
    rt: &Runtime,
) -> TokenStream {
    if slices.len() + 2 * lists.len() < 2 {
        return TokenStream::new();
    }
    // Written: a `&mut` slice or list, or an `Escaped` (owned).
    let writes = |n: &Ident| {
        def.params
            .iter()
            .any(|p| p.name == *n && !matches!(&p.ty, Type::Reference(r) if r.mutability.is_none()))
    };
    let buffers = internal("__buffers");
    let pushes = slices.iter().map(|(n, _)| {
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
    quote! {
        let mut #buffers = ::std::vec::Vec::new();
        #(#pushes)*
        #(#list_pushes)*
        #rt::__private::distinct_buffers(::core::stringify!(#name), #buffers)?;
    }
}
