//! Raw identifiers of names that are not keywords, made plain: `r#x` and
//! `x` are one name to rustc, but the checker compares names as text, so
//! `fill r#x` beside `fill x` would have been two buffers (a race it did
//! not see). A raw keyword (`r#type`) stays raw: it has no plain spelling.
//! A word only some editions reserve (`r#gen`, `r#dyn`) is refused: it
//! has one spelling or two depending on the caller's edition.

use proc_macro2::{Group, Ident, TokenStream, TokenTree};

/// Words reserved in some editions only: `r#gen` is the only spelling in
/// edition 2024 and one of two before.
const EDITION_WORDS: [&str; 5] = ["async", "await", "dyn", "try", "gen"];

/// `input` with every raw identifier of a non-keyword written plain, at
/// the same span, or an error at each raw edition-reserved word. Most
/// inputs hold no raw identifier: one look at the text decides (a raw
/// string, `r#"..."#`, is not one, and leaves the input as it is).
pub(super) fn plain_identifiers(input: TokenStream) -> Result<TokenStream, Vec<syn::Error>> {
    if !has_raw_identifier(&input.to_string()) {
        return Ok(input);
    }
    let mut errors = Vec::new();
    let out = rebuild(input, &mut errors);
    match errors.is_empty() {
        true => Ok(out),
        false => Err(errors),
    }
}

/// Whether `text` (a token stream's) holds a raw identifier: an `r#` not
/// inside a word and followed by a letter or `_`.
fn has_raw_identifier(text: &str) -> bool {
    text.match_indices("r#").any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + 2..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && after.is_some_and(|c| c.is_alphabetic() || c == '_')
    })
}

fn rebuild(stream: TokenStream, errors: &mut Vec<syn::Error>) -> TokenStream {
    stream
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Ident(ident) => TokenTree::Ident(plain(ident, errors)),
            TokenTree::Group(group) => {
                let inner = rebuild(group.stream(), errors);
                let mut plain = Group::new(group.delimiter(), inner);
                plain.set_span(group.span());
                TokenTree::Group(plain)
            }
            other => other,
        })
        .collect()
}

fn plain(ident: Ident, errors: &mut Vec<syn::Error>) -> Ident {
    let text = ident.to_string();
    let Some(name) = text.strip_prefix("r#") else {
        return ident;
    };
    if EDITION_WORDS.contains(&name) {
        errors.push(syn::Error::new(
            ident.span(),
            crate::diag::with_help(
                format!("`{text}` is a raw `{name}`, which only some editions of Rust reserve"),
                format!(
                    "whether `{text}` and `{name}` are one name depends on the caller's \
                     edition: give it another name (`{name}_`, say)"
                ),
            ),
        ));
        return ident;
    }
    // A keyword does not parse as an identifier: it stays raw.
    match syn::parse_str::<Ident>(name) {
        Ok(_) => Ident::new(name, ident.span()),
        Err(_) => ident,
    }
}

#[cfg(test)]
mod tests {
    fn plain(text: &str) -> Result<String, usize> {
        super::plain_identifiers(text.parse().unwrap())
            .map(|out| out.to_string())
            .map_err(|errors| errors.len())
    }

    #[test]
    fn raw_non_keywords_become_plain_and_raw_keywords_stay() {
        assert_eq!(
            plain("a r#b { r#type (r#c, \"r#d\") } r#union").unwrap(),
            "a b { r#type (c , \"r#d\") } union"
        );
    }

    #[test]
    fn raw_words_of_some_editions_are_refused() {
        assert_eq!(plain("r#gen r#dyn { r#async }"), Err(3));
    }

    #[test]
    fn inputs_without_raw_identifiers_are_returned_as_they_are() {
        assert_eq!(plain("a { b (c) }").unwrap(), "a { b (c) }");
    }

    #[test]
    fn raw_strings_and_words_ending_in_r_are_no_raw_identifiers() {
        use super::has_raw_identifier as raw;
        assert!(raw("r#x") && raw("f (r#_x)") && raw("a r#type"));
        assert!(!raw("f (r#\"x\"#)") && !raw("br#x") && !raw("r# x") && !raw("a b"));
    }
}
