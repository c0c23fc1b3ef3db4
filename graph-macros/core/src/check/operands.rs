//! Which buffers a node's operand reaches, for the race check: the one
//! its form names (`x`, `x.slice(..)`, `xs[i]`), and every buffer named
//! anywhere else in it, as a use of the whole buffer. An operand the
//! checker cannot read is taken to touch all it names, never nothing.

use crate::model::{place, Model};
use proc_macro2::TokenStream;
use syn::Expr;

/// The buffers an operand may reach: the one its form names (`x`, `&x`,
/// `x.slice(..)`, `xs[i]`), else every buffer named anywhere in it
/// (`{ x }`, `(x)`, `Buf::slice(x, ..)`, `f(x)`, a macro's tokens), as a
/// use of the whole buffer: an operand the checker cannot read is taken
/// to touch all it names, never nothing.
pub(super) fn buffer_names(model: &Model<'_>, operand: &Expr) -> Vec<String> {
    let mut names = Vec::new();
    if let Some(name) = buffer_name(model, operand) {
        names.push(name);
        // An index or a slice's range is an expression of its own: a
        // user's `Index` can hand back a buffer it names (`y[Pick(x)]`).
        for part in place_arguments(operand) {
            scan_names(
                model,
                quote::ToTokens::to_token_stream(part),
                false,
                &mut names,
            );
        }
        return names;
    }
    scan_names(
        model,
        quote::ToTokens::to_token_stream(operand),
        false,
        &mut names,
    );
    names
}

/// Every buffer named in `tokens`, into `names`; a device buffer's length
/// (`x.len()`, `x.num_bytes()`, `x.is_empty()`) is no use of it, except
/// in a macro's tokens (`in_macro`), which may make anything of them.
fn scan_names(model: &Model<'_>, tokens: TokenStream, in_macro: bool, names: &mut Vec<String>) {
    use proc_macro2::TokenTree;
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (at, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Group(group) => {
                let macro_call =
                    at > 0 && matches!(&tokens[at - 1], TokenTree::Punct(p) if p.as_char() == '!');
                scan_names(model, group.stream(), in_macro || macro_call, names);
            }
            TokenTree::Ident(ident)
                if !in_macro
                    && is_length_of(&tokens[at + 1..])
                    && is_device_buffer(model, ident) => {}
            TokenTree::Ident(ident) => {
                let path = crate::parse::path_expr(ident.clone());
                if let Some(name) = buffer_name(model, &path) {
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The index and range expressions along an operand's place (`xs[i]`,
/// `x.slice(a..b)`), which `buffer_name` passes over.
fn place_arguments(operand: &Expr) -> Vec<&Expr> {
    match operand {
        Expr::MethodCall(call) if call.method == "slice" => {
            let mut parts: Vec<&Expr> = call.args.iter().collect();
            parts.extend(place_arguments(&call.receiver));
            parts
        }
        Expr::Index(index) => {
            let mut parts = vec![&*index.index];
            parts.extend(place_arguments(&index.expr));
            parts
        }
        _ => Vec::new(),
    }
}

/// Whether `rest`, the tokens after an ident, call its length method:
/// `.len()`, `.num_bytes()`, `.is_empty()`, with no arguments.
fn is_length_of(rest: &[proc_macro2::TokenTree]) -> bool {
    use proc_macro2::TokenTree::{Group, Ident, Punct};
    matches!(rest, [Punct(dot), Ident(method), Group(args), ..] if dot.as_char() == '.'
        && ["len", "num_bytes", "is_empty"].iter().any(|m| method == m)
        && args.delimiter() == proc_macro2::Delimiter::Parenthesis
        && args.stream().is_empty())
}

/// Whether `ident` names a device buffer of the graph (an allocation, a
/// `buffer` declaration, a `CudaSlice` or `Buf` parameter): a `Buf` in the
/// builder, whose `len`, `num_bytes` and `is_empty` take `self`, so no
/// trait's method can stand in for them and return the buffer itself.
fn is_device_buffer(model: &Model<'_>, ident: &syn::Ident) -> bool {
    let name = ident.to_string();
    if model.buffer_named(&name).is_some() || model.device_named(&name).is_some() {
        return true;
    }
    let Some(param) = model.def.params.iter().find(|p| p.name == *ident) else {
        return false;
    };
    let last = |ty: &syn::Type| match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    };
    match &param.ty {
        syn::Type::Reference(r) => last(&r.elem).as_deref() == Some("CudaSlice"),
        ty => last(ty).as_deref() == Some("Buf"),
    }
}

/// The buffer an operand names: an allocation, a buffer parameter, or a
/// caller's variable (`&x`); or the buffer a method call reads from
/// (`x.slice(lo..hi)`, a part of `x`: an access to `x`).
pub(super) fn buffer_name(model: &Model<'_>, operand: &Expr) -> Option<String> {
    if let Some(place) = place(operand) {
        return Some(place.ident.to_string());
    }
    // A part of a buffer (`x.slice(a..b)`, as of a list's `xs[i]`); other
    // calls may return any buffer their arguments name, and are scanned.
    if let Expr::MethodCall(call) = operand {
        if call.method == "slice" {
            return buffer_name(model, &call.receiver);
        }
        return None;
    }
    // One buffer of a list (`xs[i]`): the race check sees the list as one.
    if let Expr::Index(index) = operand {
        return buffer_name(model, &index.expr);
    }
    let Expr::Path(path) = operand else {
        return None;
    };
    let name = path.path.get_ident()?.to_string();
    if model.buffer_named(&name).is_some()
        || model.host_named(&name).is_some()
        || model.device_named(&name).is_some()
    {
        return Some(name);
    }
    let param = model.def.params.iter().find(|p| p.name == name)?;
    // Buffers come by reference, or as the runtime's handles by value
    // (`Buf`, `Escaped`, `HostBuf`); scalars do not race.
    let buffer = match &param.ty {
        syn::Type::Reference(_) => true,
        syn::Type::Path(p) => {
            let last = &p.path.segments.last()?.ident;
            last == "Buf" || last == "Escaped" || last == "HostBuf"
        }
        _ => false,
    };
    buffer.then_some(name)
}
