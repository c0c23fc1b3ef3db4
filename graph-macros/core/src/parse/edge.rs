//! Edge statements: chains, fan-out and fan-in groups, edge kinds.

use super::*;
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::{bracketed, parenthesized, token, Ident, Token};

/// An edge statement; its plain `->` arrows carry `plain`.
pub(super) fn parse_edge(input: ParseStream<'_>, plain: EdgeKind) -> syn::Result<EdgeStmt> {
    let mut groups = vec![parse_edge_group(input)?];
    let mut links = Vec::new();
    while !input.peek(Token![;]) {
        if input.is_empty() {
            return Err(input.error("expected `;` after the edge"));
        }
        // The next statement (a label and its `:`, or an attribute): the
        // `;` is missing at the end of the line, where the last label is.
        // (Anything else, `=>` say, is a wrong arrow: reported below.)
        let next_statement =
            (input.peek(Ident) && input.peek2(Token![:]) && !input.peek2(Token![::]))
                || input.peek(Token![#]);
        if next_statement {
            let last = groups.last().and_then(|g| g.labels.last());
            return Err(match last {
                Some(label) => syn::Error::new_spanned(
                    label.tokens(),
                    format!(
                        "expected `;` after `{}`: an edge statement ends with `;`",
                        label.label
                    ),
                ),
                None => input.error("expected `;` after the edge"),
            });
        }
        // Another label where an arrow should be: the next edge
        // statement (`a -> b` then `b -> c;` on the next line), or a
        // missing arrow within this one.
        if input.peek(Ident) {
            if let Some(label) = groups.last().and_then(|g| g.labels.last()) {
                return Err(syn::Error::new_spanned(
                    label.tokens(),
                    crate::diag::with_help(
                        format!("expected `;` or an arrow after `{}`", label.label),
                        "an edge statement ends with `;` (`a -> b;`), and the labels of a chain are joined by `->` (`a -> b -> c;`)",
                    ),
                ));
            }
        }
        links.push(parse_edge_link(input, plain)?);
        groups.push(parse_edge_group(input)?);
    }
    input.parse::<Token![;]>()?;
    if links.is_empty() {
        return Err(syn::Error::new_spanned(
            groups[0].labels.first().map(EdgeLabel::tokens),
            "expected `->` after the label: an edge is written `a -> b;`",
        ));
    }
    Ok(EdgeStmt { groups, links })
}

fn parse_edge_group(input: ParseStream<'_>) -> syn::Result<EdgeGroup> {
    if input.peek(token::Bracket) {
        let content;
        let bracket = bracketed!(content in input);
        let labels: Punctuated<EdgeLabel, Token![,]> =
            Punctuated::parse_terminated_with(&content, parse_edge_label)?;
        if labels.is_empty() {
            return Err(syn::Error::new(
                bracket.span.join(),
                "expected at least one label in `[...]`",
            ));
        }
        Ok(EdgeGroup {
            labels: labels.into_iter().collect(),
        })
    } else {
        if !input.peek(Ident) {
            return Err(input.error("expected a label or `[a, b, ...]`"));
        }
        Ok(EdgeGroup {
            labels: vec![parse_edge_label(input)?],
        })
    }
}

/// `label` or `label[i]` / `label[i-k]`.
fn parse_edge_label(input: ParseStream<'_>) -> syn::Result<EdgeLabel> {
    let label: Ident = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), "expected a label"))?;
    // `first.s2`: a node inside a placed fragment (or a block).
    if input.peek(Token![.]) && input.peek2(Ident) {
        let dot: Token![.] = input.parse()?;
        let inner: Ident = input.parse()?;
        return Err(syn::Error::new_spanned(
            quote::quote!(#label #dot #inner),
            crate::diag::with_help(
                format!("`{label}.{inner}` cannot be named in an edge: edges name nodes, blocks and placements whole"),
                format!("`{label} -> next` runs `next` after all of `{label}`; to order `{inner}` alone, write its edge inside the fragment"),
            ),
        ));
    }
    if !input.peek(token::Bracket) {
        return Ok(EdgeLabel { label, index: None });
    }
    let content;
    let bracket = bracketed!(content in input);
    let mut tokens = quote::ToTokens::to_token_stream(&label);
    let mut group =
        proc_macro2::Group::new(Delimiter::Bracket, content.fork().parse::<TokenStream>()?);
    group.set_span(bracket.span.join());
    tokens.extend([TokenTree::Group(group)]);
    let wrong = |tokens: &TokenStream| {
        syn::Error::new_spanned(
            tokens,
            crate::diag::with_help(
                "expected `label[i]` or `label[i-k]`: an index names an earlier iteration of a repeated block",
                "`k` is an integer literal; `step[i-1] -> step` orders each iteration's `step` after the one before",
            ),
        )
    };
    let var: Ident = content.parse().map_err(|_| wrong(&tokens))?;
    let back = if content.is_empty() {
        0
    } else if content.peek(Token![-]) {
        content.parse::<Token![-]>()?;
        let k: syn::LitInt = content.parse().map_err(|_| wrong(&tokens))?;
        k.base10_parse::<usize>().map_err(|_| wrong(&tokens))?
    } else if content.peek(Token![+]) {
        content.parse::<Token![+]>()?;
        let k = content
            .parse::<syn::LitInt>()
            .map_or_else(|_| "k".to_string(), |k| k.base10_digits().to_string());
        return Err(syn::Error::new_spanned(
            &tokens,
            crate::diag::with_help(
                format!("`{label}[{var}+{k}]` names a later iteration: an edge between iterations goes forward, from the earlier one"),
                format!("write the earlier node on the left: `... -> {label}[{var}+{k}]` is `...[{var}-{k}] -> {label}`"),
            ),
        ));
    } else {
        return Err(wrong(&tokens));
    };
    if !content.is_empty() {
        return Err(wrong(&tokens));
    }
    Ok(EdgeLabel {
        label,
        index: Some(LabelIndex { var, back, tokens }),
    })
}

fn parse_edge_link(input: ParseStream<'_>, plain: EdgeKind) -> syn::Result<EdgeLink> {
    if input.peek(Token![->]) {
        let arrow: Token![->] = input.parse()?;
        return Ok(EdgeLink {
            kind: plain,
            tokens: quote::quote!(#arrow),
            span: arrow.spans[0],
        });
    }
    if input.peek(Token![-]) && input.peek2(token::Paren) {
        let minus: Token![-] = input.parse()?;
        let content;
        let paren = parenthesized!(content in input);
        let lookahead = content.lookahead1();
        let kind = if lookahead.peek(kw::programmatic) {
            content.parse::<kw::programmatic>()?;
            EdgeKind::Programmatic
        } else if lookahead.peek(kw::launch_order) {
            content.parse::<kw::launch_order>()?;
            EdgeKind::LaunchOrder
        } else {
            return Err(lookahead.error());
        };
        if !content.is_empty() {
            return Err(content.error("expected `)`"));
        }
        let arrow: Token![->] = input.parse()?;
        let mut tokens = quote::quote!(#minus);
        let mut group = proc_macro2::Group::new(Delimiter::Parenthesis, TokenStream::new());
        group.set_span(paren.span.join());
        tokens.extend([TokenTree::Group(group)]);
        tokens.extend(quote::quote!(#arrow));
        let span = paren.span.join();
        return Ok(EdgeLink { kind, tokens, span });
    }
    Err(input.error("expected `->`, `-(programmatic)->` or `-(launch_order)->`"))
}

/// The kind an edge statement's `#[programmatic]` or `#[launch_order]`
/// gives each of its plain `->` arrows (`Full` without one).
pub(super) fn edge_attribute(attrs: &[Attribute]) -> syn::Result<EdgeKind> {
    let mut kind = EdgeKind::Full;
    for attr in attrs {
        let path_only = matches!(attr.meta, syn::Meta::Path(_));
        let this = if path_only && attr.path().is_ident("programmatic") {
            EdgeKind::Programmatic
        } else if path_only && attr.path().is_ident("launch_order") {
            EdgeKind::LaunchOrder
        } else {
            return Err(syn::Error::new_spanned(
                attr,
                "an edge statement takes `#[programmatic]` or `#[launch_order]`, \
                 which gives every `->` in it that kind",
            ));
        };
        if kind != EdgeKind::Full {
            return Err(syn::Error::new_spanned(
                attr,
                "an edge statement takes one edge-kind attribute",
            ));
        }
        kind = this;
    }
    Ok(kind)
}
