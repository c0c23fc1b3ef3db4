//! Element types of operands, where the graph spells them (a parameter's
//! `CudaSlice<T>` or `&[T]`, an `alloc`, `buffer` or `host` declaration's
//! `T`): so that a copy between two element types, or a fill with a
//! literal of another, is reported at the user's tokens rather than as a
//! type mismatch against the runtime's buffer types. Only Rust's primitive
//! numeric types are compared: two other spellings may name one type (an
//! alias), which only rustc knows.

use super::{Model, Op};
use syn::{Expr, Type};

/// The primitive numeric types, which no alias can hide.
const PRIMITIVES: &[&str] = &[
    "f32", "f64", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128",
    "isize",
];

/// `ty` spelled, if it is a primitive numeric type.
pub fn primitive(ty: &Type) -> Option<String> {
    let Type::Path(path) = ty else {
        return None;
    };
    let ident = path.path.get_ident()?.to_string();
    PRIMITIVES.contains(&ident.as_str()).then_some(ident)
}

impl Model<'_> {
    /// The primitive element type of the buffer an operand names, written
    /// as it is (or in parentheses), where the graph spells it.
    pub fn element_type(&self, expr: &Expr) -> Option<String> {
        let ident = super::bare_name(expr)?;
        let name = ident.to_string();
        if let Some(buffer) = self.buffer_named(&name) {
            return match self.nodes[self.buffers[buffer].alloc].op {
                Op::Alloc { ty, .. } => primitive(ty),
                _ => None,
            };
        }
        if let Some(decl) = self.device_named(&name) {
            return primitive(&decl.ty);
        }
        if let Some(decl) = self.host_named(&name) {
            return primitive(&decl.ty);
        }
        let param = self.def.params.iter().find(|p| p.name == *ident)?;
        let Type::Reference(reference) = &param.ty else {
            return None;
        };
        match &*reference.elem {
            Type::Slice(slice) => primitive(&slice.elem),
            Type::Path(path) => {
                primitive(type_argument(path, "CudaSlice").or_else(|| type_argument(path, "Vec"))?)
            }
            _ => None,
        }
    }
}

/// `T` of a path type `Name<T>` (one argument) whose last segment is
/// `wanted`.
pub fn type_argument<'t>(path: &'t syn::TypePath, wanted: &str) -> Option<&'t Type> {
    let last = path.path.segments.last()?;
    if last.ident != wanted {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(ty) if args.args.len() == 1 => Some(ty),
        _ => None,
    }
}

/// `ty` as a message spells it: `&mut Vec<f32>` as written, not
/// `& mut Vec < f32 >` as its tokens print.
pub fn type_spelled(ty: &Type) -> String {
    let mut text = quote::ToTokens::to_token_stream(ty).to_string();
    for (spaced, tight) in [
        ("& ", "&"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        ("[ ", "["),
        (" ]", "]"),
        (" ;", ";"),
    ] {
        text = text.replace(spaced, tight);
    }
    text
}

/// The type a literal's suffix names (`0.0f64`, `7u32`), if it has one.
pub fn literal_suffix(expr: &Expr) -> Option<String> {
    let Expr::Lit(lit) = expr else {
        return None;
    };
    let suffix = match &lit.lit {
        syn::Lit::Int(int) => int.suffix(),
        syn::Lit::Float(float) => float.suffix(),
        _ => return None,
    };
    (!suffix.is_empty()).then(|| suffix.to_string())
}
