//! Repeated blocks: `label: for i in 0..count { ... }`.

use super::*;
use syn::parse::ParseStream;
use syn::{Attribute, Expr, Ident, Token};

/// `for VAR in 0..COUNT { ... }` after `label:`.
pub(super) fn parse_repeat(
    input: ParseStream<'_>,
    attrs: Vec<Attribute>,
    label: Ident,
    errors: &mut Vec<syn::Error>,
) -> syn::Result<RepeatBlock> {
    let for_token: Token![for] = input.parse()?;
    let var: Ident = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected the loop variable: a repeated block is written `label: for i in 0..n { ... }`",
        )
    })?;
    input.parse::<Token![in]>()?;
    let range = Expr::parse_without_eager_brace(input)?;
    let tokens = quote::ToTokens::to_token_stream(&range);
    let count = match range {
        Expr::Range(syn::ExprRange {
            start: Some(start),
            limits: syn::RangeLimits::HalfOpen(_),
            end: Some(end),
            ..
        }) if matches!(&*start, Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(zero), .. }) if zero.base10_digits() == "0") => {
            *end
        }
        _ => {
            return Err(syn::Error::new_spanned(
                tokens,
                crate::diag::with_help(
                    "a repeated block counts from 0: write `for i in 0..count`",
                    "the count is any expression evaluated when the graph is built (a parameter, a constant)",
                ),
            ))
        }
    };
    let body = parse_block(input, errors)?;
    Ok(RepeatBlock {
        attrs,
        label,
        for_token,
        var,
        range: tokens,
        count,
        body,
    })
}
