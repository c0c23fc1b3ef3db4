//! The graph parameters' types, as the generated items take them:
//! slices (`&CudaSlice<T>`, `&mut`, an `Escaped<T>`), lists of slices,
//! and lifetimes made explicit.

use crate::model::type_argument;
use syn::visit_mut::VisitMut;
use syn::Type;

/// `&CudaSlice<T>` or `&mut CudaSlice<T>` -> `T`.
pub(super) fn slice_element(ty: &Type) -> Option<Type> {
    let (path, wanted) = match ty {
        Type::Reference(reference) => match &*reference.elem {
            Type::Path(path) => (path, "CudaSlice"),
            _ => return None,
        },
        // An allocation another graph's launch made, taken by value.
        Type::Path(path) => (path, "Escaped"),
        _ => return None,
    };
    type_argument(path, wanted).cloned()
}

/// `&[CudaSlice<T>]` or `&mut [CudaSlice<T>]` -> `T`.
pub(super) fn list_element(ty: &Type) -> Option<Type> {
    let Type::Reference(reference) = ty else {
        return None;
    };
    let Type::Slice(slice) = &*reference.elem else {
        return None;
    };
    let Type::Path(path) = &*slice.elem else {
        return None;
    };
    type_argument(path, "CudaSlice").cloned()
}

/// The parameter type with every elided reference lifetime made `'a`.
pub(super) fn with_lifetime(ty: &Type) -> Type {
    struct AddLifetime;
    impl VisitMut for AddLifetime {
        fn visit_type_reference_mut(&mut self, r: &mut syn::TypeReference) {
            if r.lifetime.as_ref().is_none_or(|l| l.ident == "_") {
                r.lifetime = Some(syn::Lifetime::new("'a", proc_macro2::Span::call_site()));
            }
            syn::visit_mut::visit_type_reference_mut(self, r);
        }
    }
    let mut ty = ty.clone();
    AddLifetime.visit_type_mut(&mut ty);
    ty
}
