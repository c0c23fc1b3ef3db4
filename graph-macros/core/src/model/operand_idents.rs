//! The identifiers a node's operands name, and those they bind
//! themselves: the checks that a loop variable is used inside its block
//! and that a kernel sets only the handles it may read them.

use super::Op;
use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use quote::ToTokens;
use syn::Ident;

/// The tokens of a node's operands (not a kernel's launch configuration,
/// which reads host values only: `buf.len()` there uses no memory).
fn operand_tokens(op: &Op<'_>) -> TokenStream {
    let mut tokens = TokenStream::new();
    match *op {
        Op::Kernel(k) => k.args.to_tokens(&mut tokens),
        Op::Copy { src, dst } => {
            src.to_tokens(&mut tokens);
            dst.to_tokens(&mut tokens);
        }
        Op::Fill { dst, value } => {
            dst.to_tokens(&mut tokens);
            value.to_tokens(&mut tokens);
        }
        Op::Host { closure, .. } => closure.to_tokens(&mut tokens),
        Op::Child { graph } => graph.to_tokens(&mut tokens),
        Op::Record { event } | Op::Wait { event } => event.to_tokens(&mut tokens),
        Op::Capture {
            stream, closure, ..
        } => {
            stream.to_tokens(&mut tokens);
            closure.body.to_tokens(&mut tokens);
        }
        Op::Empty
        | Op::Alloc { .. }
        | Op::Free { .. }
        | Op::If { .. }
        | Op::While { .. }
        | Op::Switch { .. } => {}
    }
    tokens
}

/// A kernel's launch configuration tokens (none for other nodes).
fn config_tokens(op: &Op<'_>) -> TokenStream {
    let mut tokens = TokenStream::new();
    if let Op::Kernel(k) = op {
        k.grid.to_tokens(&mut tokens);
        k.block.to_tokens(&mut tokens);
        k.shared_mem.to_tokens(&mut tokens);
    }
    tokens
}

/// The identifiers a node's operands name: single-segment paths, not field
/// names (`x.buf`) nor path segments (`m::buf`).
pub(super) fn operand_idents(op: &Op<'_>) -> Vec<Ident> {
    let mut out = Vec::new();
    collect_idents(operand_tokens(op), &mut out);
    out
}

/// The identifiers one operand names: single-segment paths, not field
/// names nor path segments (as a node's operands are read).
pub fn expr_idents(operand: &dyn quote::ToTokens) -> Vec<Ident> {
    let mut out = Vec::new();
    collect_idents(operand.to_token_stream(), &mut out);
    out
}

/// The identifiers a kernel's launch configuration names, as
/// [`operand_idents`].
pub(super) fn config_idents(op: &Op<'_>) -> Vec<Ident> {
    let mut out = Vec::new();
    collect_idents(config_tokens(op), &mut out);
    out
}

fn collect_idents(tokens: TokenStream, out: &mut Vec<Ident>) {
    collect_idents_in(tokens, false, out);
}

/// `in_macro`: in a macro's tokens, which may make a name of anything
/// (`pick!(t: _)`, `pick!(. t)`), every identifier counts.
fn collect_idents_in(tokens: TokenStream, in_macro: bool, out: &mut Vec<Ident>) {
    // After a lone `.` (a field or method) or a path's `::` (a segment),
    // an identifier names no variable; after a struct field's single `:`
    // (`W { f: t }`), it does. (`..`, a range, is not a lone `.`.)
    let mut after_member = false;
    let mut joined: Option<char> = None;
    let mut after_bang = false;
    let mut iter = tokens.into_iter().peekable();
    while let Some(tt) = iter.next() {
        let macro_call = std::mem::take(&mut after_bang);
        match tt {
            TokenTree::Ident(ident) => {
                // Before a `:`: a path's segment (`k::K`) or a field's name.
                let before_colon =
                    matches!(iter.peek(), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                if in_macro || (!after_member && !before_colon) {
                    out.push(ident);
                }
                (after_member, joined) = (false, None);
            }
            TokenTree::Punct(p) => {
                let c = p.as_char();
                after_member = match c {
                    ':' => joined == Some(':'),
                    '.' => joined != Some('.') && p.spacing() == Spacing::Alone,
                    _ => false,
                };
                joined = (p.spacing() == Spacing::Joint).then_some(c);
                after_bang = c == '!';
            }
            TokenTree::Group(g) => {
                collect_idents_in(g.stream(), in_macro || macro_call, out);
                (after_member, joined) = (false, None);
            }
            TokenTree::Literal(_) => (after_member, joined) = (false, None),
        }
    }
}

/// The identifiers the operands bind: the patterns after `let` and `for`,
/// of match arms, and a closure's parameters. (A hint for one diagnostic,
/// not name resolution: a name bound anywhere in the operands counts as
/// bound.)
pub(super) fn bound_idents(op: &Op<'_>) -> Vec<Ident> {
    let mut out = Vec::new();
    collect_bound(operand_tokens(op), &mut out);
    collect_bound(config_tokens(op), &mut out);
    out
}

fn collect_bound(tokens: TokenStream, out: &mut Vec<Ident>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    // Where an expression starts after a closure's parameters (`|a| |b|`).
    let mut expr_start = 0;
    // Where the current match arm's pattern starts (after `,` or a block).
    let mut arm_start = 0;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            // `for<'a>` is a bound's lifetimes, not a loop.
            TokenTree::Ident(kw) if kw == "for" && is_token(tokens.get(i + 1), "<") => {}
            TokenTree::Ident(kw) if kw == "let" || kw == "for" => {
                // The pattern: up to `=` (let), `in` (for) or the `:` of a
                // type (not a path's `::`).
                let end = if kw == "let" { "=" } else { "in" };
                i += 1;
                while i < tokens.len() && !is_token(Some(&tokens[i]), end) {
                    if is_path_separator(&tokens, i) {
                        i += 2;
                        continue;
                    }
                    if is_token(Some(&tokens[i]), ":") {
                        break;
                    }
                    pattern_idents(&tokens[i], out);
                    i += 1;
                }
                continue;
            }
            // A closure's parameters: `|` where an expression starts, up to
            // the next `|`; each parameter's type (`:` to `,`) binds nothing.
            TokenTree::Punct(p)
                if p.as_char() == '|' && (i == expr_start || starts_expression(&tokens[..i])) =>
            {
                i += 1;
                let mut in_type = false;
                while i < tokens.len() && !is_token(Some(&tokens[i]), "|") {
                    if is_path_separator(&tokens, i) {
                        i += 2;
                        continue;
                    }
                    if is_token(Some(&tokens[i]), ":") || is_token(Some(&tokens[i]), ",") {
                        in_type = is_token(Some(&tokens[i]), ":");
                    } else if !in_type {
                        pattern_idents(&tokens[i], out);
                    }
                    i += 1;
                }
                expr_start = i + 1;
            }
            // A match arm: its pattern, up to an `if` guard.
            TokenTree::Punct(p) if p.as_char() == '=' && is_token(tokens.get(i + 1), ">") => {
                for tt in tokens[arm_start..i]
                    .iter()
                    .take_while(|tt| !is_token(Some(tt), "if"))
                {
                    pattern_idents(tt, out);
                }
            }
            TokenTree::Punct(p) if p.as_char() == ',' => arm_start = i + 1,
            TokenTree::Group(g) => {
                collect_bound(g.stream(), out);
                if g.delimiter() == Delimiter::Brace {
                    arm_start = i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// Whether an expression may start after `before` (so a `|` opens a
/// closure rather than or-ing two operands).
fn starts_expression(before: &[TokenTree]) -> bool {
    match before.last() {
        None => true,
        Some(TokenTree::Punct(p)) => p.as_char() != '|' || before.len() == 1,
        Some(TokenTree::Ident(ident)) => ident == "move" || ident == "return",
        Some(TokenTree::Group(g)) => g.delimiter() == Delimiter::None,
        Some(TokenTree::Literal(_)) => false,
    }
}

/// Whether `tokens[i]` opens a path's `::`.
fn is_path_separator(tokens: &[TokenTree], i: usize) -> bool {
    matches!(&tokens[i], TokenTree::Punct(p) if p.as_char() == ':' && p.spacing() == Spacing::Joint)
        && is_token(tokens.get(i + 1), ":")
}

fn is_token(tt: Option<&TokenTree>, text: &str) -> bool {
    match tt {
        Some(TokenTree::Punct(p)) => text.len() == 1 && text.starts_with(p.as_char()),
        Some(TokenTree::Ident(ident)) => ident == text,
        _ => false,
    }
}

/// The names a pattern token binds (`mut`, `ref` and paths' segments
/// aside: `Some(s)` binds `s`, not `Some`; over-counting is harmless).
fn pattern_idents(tt: &TokenTree, out: &mut Vec<Ident>) {
    match tt {
        TokenTree::Ident(ident) if ident != "mut" && ident != "ref" => out.push(ident.clone()),
        TokenTree::Group(g) => g.stream().into_iter().for_each(|t| pattern_idents(&t, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(tokens: TokenStream) -> Vec<String> {
        let mut out = Vec::new();
        collect_bound(tokens, &mut out);
        out.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn lets_closures_and_fors_bind_their_patterns_only() {
        use quote::quote;
        assert_eq!(
            bound(quote!({
                let mut s = 3;
                x.slice(s..)
            })),
            ["s"]
        );
        assert_eq!(
            bound(quote!({
                let (a, ref b): (u32, u32) = t;
                a
            })),
            ["a", "b"]
        );
        assert_eq!(
            bound(quote!(f(|s: usize| s + w, move |(i, j)| i))),
            ["s", "i", "j"]
        );
        assert_eq!(bound(quote!({ for k in 0..n {} })), ["k"]);
        // Or-ing operands and an empty closure bind nothing.
        assert!(bound(quote!(a | b)).is_empty());
        assert!(bound(quote!((a) | b || c)).is_empty());
        assert!(bound(quote!(f(|| w))).is_empty());
        // Match arms, path patterns, closures returning closures, `for<'a>`.
        assert_eq!(
            bound(quote!(match o {
                Some(w) if w > 0 => w,
                None => 0,
            })),
            ["Some", "w", "None"]
        );
        assert_eq!(
            bound(quote!({
                let core::option::Option::Some(w) = o else { 0 };
                w
            })),
            ["core", "option", "Option", "Some", "w"]
        );
        assert_eq!(bound(quote!((|_a: usize| |w: usize| w)(0)(1))), ["_a", "w"]);
        assert!(bound(quote!(f::<for<'a> fn(&'a u8)>(x, y))).is_empty());
    }
}
