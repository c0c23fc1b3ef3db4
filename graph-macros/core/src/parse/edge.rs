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
        links.push(parse_edge_link(input, plain)?);
        groups.push(parse_edge_group(input)?);
    }
    input.parse::<Token![;]>()?;
    if links.is_empty() {
        return Err(syn::Error::new_spanned(
            groups[0].labels.first(),
            "expected `->` after the label: an edge is written `a -> b;`",
        ));
    }
    Ok(EdgeStmt { groups, links })
}

fn parse_edge_group(input: ParseStream<'_>) -> syn::Result<EdgeGroup> {
    if input.peek(token::Bracket) {
        let content;
        let bracket = bracketed!(content in input);
        let labels: Punctuated<Ident, Token![,]> = Punctuated::parse_terminated(&content)?;
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
        let label: Ident = input
            .parse()
            .map_err(|e| syn::Error::new(e.span(), "expected a label or `[a, b, ...]`"))?;
        Ok(EdgeGroup {
            labels: vec![label],
        })
    }
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
