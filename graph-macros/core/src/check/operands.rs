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
/// to touch all it names, never nothing. There, and in an index (a
/// user's `Index` can hand back any value it is given), any other name
/// that could hold a buffer handle counts too (a "carrier": a `Buf` is
/// `Copy`, and an operand can stash it in a cell another operand reads).
pub(super) fn buffer_names(model: &Model<'_>, operand: &Expr) -> Vec<String> {
    let mut names = Vec::new();
    let tokens = |expr: &Expr| quote::ToTokens::to_token_stream(expr);
    if let Some(name) = buffer_name(model, operand) {
        names.push(name);
        for part in place_arguments(operand) {
            let counting = match part {
                // `Buf::slice` takes a `Range<usize>`: no handle comes out.
                Part::Range(_) => Counting::Buffers,
                Part::Index(_) => Counting::AndCarriers,
            };
            let (Part::Range(expr) | Part::Index(expr)) = part;
            let bound = crate::model::bound_in(tokens(expr));
            scan_names(
                model,
                tokens(expr),
                Scan {
                    in_macro: false,
                    counting,
                    bound: &bound,
                },
                &mut names,
            );
        }
        return names;
    }
    let bound = crate::model::bound_in(tokens(operand));
    let scan = Scan {
        in_macro: false,
        counting: Counting::AndCarriers,
        bound: &bound,
    };
    scan_names(model, tokens(operand), scan, &mut names);
    names
}

/// What a scan counts besides the graph's own buffers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Counting {
    Buffers,
    AndCarriers,
}

#[derive(Clone, Copy)]
struct Scan<'b> {
    /// In a macro's tokens, which may make anything of them.
    in_macro: bool,
    counting: Counting,
    /// The names the operand binds itself (`let`, closure parameters).
    bound: &'b [syn::Ident],
}

/// Every buffer (and, as `scan.counting` says, carrier) named in
/// `tokens`, into `names`. A field, method or path segment (after a lone
/// `.` or a `::`, or before a `:`) names no variable; a device buffer's
/// length (`x.len()`, `x.num_bytes()`, `x.is_empty()`) is no use of it,
/// except in a macro's tokens.
fn scan_names(model: &Model<'_>, tokens: TokenStream, scan: Scan<'_>, names: &mut Vec<String>) {
    use proc_macro2::{Spacing, TokenTree};
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut push = |name: String| {
        if !names.contains(&name) {
            names.push(name);
        }
    };
    let (mut member, mut joined) = (false, None::<char>);
    for (at, token) in tokens.iter().enumerate() {
        let after_member = std::mem::take(&mut member);
        let after_joined = joined.take();
        match token {
            TokenTree::Group(group) => {
                let macro_call =
                    at > 0 && matches!(&tokens[at - 1], TokenTree::Punct(p) if p.as_char() == '!');
                let inner = Scan {
                    in_macro: scan.in_macro || macro_call,
                    ..scan
                };
                let mut found = Vec::new();
                scan_names(model, group.stream(), inner, &mut found);
                found.into_iter().for_each(&mut push);
            }
            TokenTree::Punct(p) => {
                let c = p.as_char();
                member = match c {
                    ':' => after_joined == Some(':'),
                    '.' => after_joined != Some('.') && p.spacing() == Spacing::Alone,
                    // A lifetime's name.
                    '\'' => true,
                    _ => false,
                };
                joined = (p.spacing() == Spacing::Joint).then_some(c);
            }
            TokenTree::Ident(_) if after_member => {}
            TokenTree::Ident(ident)
                if !scan.in_macro
                    && is_length_of(&tokens[at + 1..])
                    && is_device_buffer(model, ident) => {}
            TokenTree::Ident(ident) => {
                let path = Expr::Path(syn::ExprPath {
                    attrs: Vec::new(),
                    qself: None,
                    path: ident.clone().into(),
                });
                if let Some(name) = buffer_name(model, &path) {
                    push(name);
                } else if scan.counting == Counting::AndCarriers
                    && could_carry(model, ident, &tokens[at + 1..], scan.bound)
                {
                    push(ident.to_string());
                }
            }
            TokenTree::Literal(_) => {}
        }
    }
}

/// Whether the name `ident`, not one of the graph's buffers, could hold a
/// buffer handle: not a keyword or primitive type, a loop variable, a
/// scalar parameter or a name the operand binds, nor a function, macro,
/// struct or path it calls or names (`f(..)`, `m!(..)`, `S { .. }`, `a::b`).
fn could_carry(
    model: &Model<'_>,
    ident: &syn::Ident,
    rest: &[proc_macro2::TokenTree],
    bound: &[syn::Ident],
) -> bool {
    use proc_macro2::{Delimiter, TokenTree};
    let text = ident.to_string();
    const PRIMITIVES: [&str; 17] = [
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
        "f32", "f64", "bool", "char", "str",
    ];
    if crate::parse::is_keyword(&text) || PRIMITIVES.contains(&text.as_str()) {
        return false;
    }
    let named = match rest.first() {
        Some(TokenTree::Group(g)) => {
            matches!(g.delimiter(), Delimiter::Parenthesis | Delimiter::Brace)
        }
        Some(TokenTree::Punct(p)) => p.as_char() == '!' || p.as_char() == ':',
        _ => false,
    };
    if named || bound.iter().any(|b| b == ident) {
        return false;
    }
    if model.repeats.iter().any(|r| r.syntax.var == *ident) {
        return false;
    }
    let scalar_param = model.def.params.iter().any(|p| {
        p.name == *ident
            && matches!(&p.ty, syn::Type::Path(t) if t.path.get_ident().is_some_and(|i| PRIMITIVES.iter().any(|s| i == s)))
    });
    !scalar_param
}

/// An expression along an operand's place that `buffer_name` passes
/// over: a slice's range (`x.slice(a..b)`) or an index (`xs[i]`).
enum Part<'e> {
    Range(&'e Expr),
    Index(&'e Expr),
}

/// The ranges and indices along an operand's place.
fn place_arguments(operand: &Expr) -> Vec<Part<'_>> {
    match operand {
        Expr::MethodCall(call) if call.method == "slice" => {
            let mut parts: Vec<Part<'_>> = call.args.iter().map(Part::Range).collect();
            parts.extend(place_arguments(&call.receiver));
            parts
        }
        Expr::Index(index) => {
            let mut parts = vec![Part::Index(&index.index)];
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
    if let Some((ident, _)) = place(operand) {
        return Some(ident.to_string());
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
