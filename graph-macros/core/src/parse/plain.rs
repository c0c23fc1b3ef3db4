//! Raw identifiers of names that are not keywords, made plain: `r#x` and
//! `x` are one name to rustc, but the checker compares names as text, so
//! `fill r#x` beside `fill x` would have been two buffers (a race it did
//! not see). A raw keyword (`r#type`) stays raw: it has no plain spelling.

use proc_macro2::{Group, Ident, TokenStream, TokenTree};

/// `input` with every raw identifier of a non-keyword written plain, at
/// the same span. Most inputs hold none: one look at the text decides.
pub(super) fn plain_identifiers(input: TokenStream) -> TokenStream {
    if !input.to_string().contains("r#") {
        return input;
    }
    rebuild(input)
}

fn rebuild(stream: TokenStream) -> TokenStream {
    stream
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Ident(ident) => TokenTree::Ident(plain(ident)),
            TokenTree::Group(group) => {
                let mut plain = Group::new(group.delimiter(), rebuild(group.stream()));
                plain.set_span(group.span());
                TokenTree::Group(plain)
            }
            other => other,
        })
        .collect()
}

fn plain(ident: Ident) -> Ident {
    let text = ident.to_string();
    match text.strip_prefix("r#") {
        // A keyword would not parse as an identifier: it stays raw.
        Some(name) if syn::parse_str::<Ident>(name).is_ok() => Ident::new(name, ident.span()),
        _ => ident,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn raw_non_keywords_become_plain_and_raw_keywords_stay() {
        let input: proc_macro2::TokenStream =
            "a r#b { r#type (r#c, \"r#d\") } r#async".parse().unwrap();
        let out = super::plain_identifiers(input).to_string();
        assert_eq!(out, "a b { r#type (c , \"r#d\") } r#async");
    }

    #[test]
    fn inputs_without_raw_identifiers_are_returned_as_they_are() {
        let input: proc_macro2::TokenStream = "a { b (c) }".parse().unwrap();
        assert_eq!(super::plain_identifiers(input).to_string(), "a { b (c) }");
    }
}
