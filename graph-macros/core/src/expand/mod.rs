//! Code generation for a checked graph. Never reports user errors (the
//! checker did); on invalid input `fallback` emits the items a caller
//! expects, so later errors stay quiet and completion keeps working.
//!
//! The graph is built through graph-runtime calls in a deterministic order:
//! per graph level, nodes in topological order, ties broken by source order
//! (so source order wherever the edges allow), dependencies in edge order.
//! Two builds of one graph type therefore always have the same topology.

mod asserts;
mod chunk;
mod expression;
mod fallback;
mod item;
mod kernel;
mod level;
mod owned;
mod param_types;
mod rebuild;
mod repeat;
mod repeat_deps;
mod table;
mod units;

use crate::check::Topology;
use crate::model::Model;
use crate::parse::GraphDef;
use proc_macro2::TokenStream;

/// The expansion of one checked graph.
pub fn graph(model: &Model<'_>, topology: &Topology) -> TokenStream {
    let rt = Runtime::of(model.def);
    match model.def.name {
        Some(_) => cfg_items(model.def, item::expand(model, topology, &rt)),
        None => expression::expand(model, topology, &rt),
    }
}

/// What a graph with errors expands to: the same items with bodies that are
/// never reached (the crate does not compile).
pub fn fallback(def: &GraphDef) -> TokenStream {
    let rt = Runtime::of(def);
    let kernels = fallback::kernels_named(def);
    match &def.name {
        Some(_) => {
            let items = fallback::fallback(def, &rt);
            cfg_items(def, quote::quote!(#items #kernels))
        }
        None => {
            let value = expression::fallback(&rt);
            quote::quote!({ #kernels #value })
        }
    }
}

/// The runtime's path in generated code, interpolated as `#rt::Item`:
/// `::graph_runtime`, or the graph's `#[crate_path = path]` (a renamed
/// dependency, a re-export). Spanned at the call site; [`Runtime::at`]
/// for code spanned at the user's tokens. (Threaded through the emitters
/// rather than substituted afterwards: a pass over the whole output cost
/// a third of the macro's time on 10,000 nodes.)
#[derive(Debug)]
pub struct Runtime(Vec<proc_macro2::TokenTree>);

impl Runtime {
    /// The path `def` names the runtime by.
    pub fn of(def: &GraphDef) -> Self {
        let path = def
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("crate_path"))
            .find_map(|a| crate::model::attrs::crate_path(a).ok());
        let path = match path {
            Some(path) => quote::ToTokens::to_token_stream(&path),
            None => quote::quote!(::graph_runtime),
        };
        Runtime(
            respan(path, proc_macro2::Span::call_site())
                .into_iter()
                .collect(),
        )
    }

    /// A link for generated docs to the runtime's `item` (`Exec::buffer`):
    /// an intra-doc link by the crate's own name when the graph names the
    /// runtime by it, else the item's name as code (a renamed runtime's
    /// path could not be resolved from the user's crate docs).
    pub fn doc_link(&self, item: &str) -> String {
        if self.0.iter().cloned().collect::<TokenStream>().to_string() == ":: graph_runtime" {
            format!("[`graph_runtime::{item}`]")
        } else {
            format!("`{item}`")
        }
    }

    /// Doc attributes for generated items, one per line of `text` (as if
    /// written with `///`), its `{link}` a [`Runtime::doc_link`] to `item`.
    pub fn doc(&self, text: &str, item: &str) -> TokenStream {
        let text = text.replace("{link}", &self.doc_link(item));
        text.lines()
            .map(|line| {
                let line = format!(" {line}");
                quote::quote!(#[doc = #line])
            })
            .collect()
    }

    /// The path with every token spanned at `span`, as it is interpolated
    /// (no copy of the path is made until then).
    pub fn at(&self, span: proc_macro2::Span) -> RuntimeAt<'_> {
        RuntimeAt(self, span)
    }
}

/// [`Runtime::at`]: the runtime's path spanned at the user's tokens.
#[derive(Debug, Clone, Copy)]
pub struct RuntimeAt<'r>(&'r Runtime, proc_macro2::Span);

impl quote::ToTokens for RuntimeAt<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(self.0 .0.iter().map(|t| {
            let mut t = t.clone();
            t.set_span(self.1);
            t
        }));
    }
}

impl quote::ToTokens for Runtime {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(self.0.iter().cloned());
    }
}

/// `text` as a raw string literal (`r#"..."#`, with enough `#`s), which
/// needs no escaping: a graph's DOT text runs to megabytes, and escaping
/// it char by char cost a twentieth of the macro's time. Text with a
/// carriage return (not allowed in a raw string) is escaped as usual.
pub(crate) fn raw_str_literal(text: &str) -> proc_macro2::Literal {
    if !text.contains('\r') {
        let mut hashes = String::from("#");
        while text.contains(&format!("\"{hashes}")) {
            hashes.push('#');
        }
        if let Ok(literal) = format!("r{hashes}\"{text}\"{hashes}").parse() {
            return literal;
        }
    }
    proc_macro2::Literal::string(text)
}

/// Tokens made for one interpolation: one token needs no stream (a
/// stream is two allocations outside rustc, its shared vector and the
/// vector's buffer). `#piece` copies it; [`Moved`] moves it.
#[derive(Clone)]
pub(crate) enum Piece {
    Token(proc_macro2::TokenTree),
    Stream(TokenStream),
}

impl From<TokenStream> for Piece {
    fn from(stream: TokenStream) -> Self {
        Piece::Stream(stream)
    }
}

impl From<syn::Ident> for Piece {
    fn from(ident: syn::Ident) -> Self {
        Piece::Token(ident.into())
    }
}

impl From<proc_macro2::Literal> for Piece {
    fn from(literal: proc_macro2::Literal) -> Self {
        Piece::Token(literal.into())
    }
}

impl Piece {
    fn extend_by_move(self, tokens: &mut TokenStream) {
        match self {
            Piece::Token(token) => tokens.extend(std::iter::once(token)),
            Piece::Stream(stream) => tokens.extend(stream),
        }
    }
}

impl quote::ToTokens for Piece {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        match self {
            Piece::Token(token) => tokens.extend(std::iter::once(token.clone())),
            Piece::Stream(stream) => stream.to_tokens(tokens),
        }
    }
}

/// Tokens that `quote!` interpolates by move. `#stream` clones every
/// token of a `TokenStream` and the original is then dropped: on large
/// graphs most of the macro's time went to those copies (each identifier
/// is an allocation outside rustc). Interpolate it once only: a second
/// `#moved` of the same value emits nothing. (An `Option`: a
/// `TokenStream` left in its place would be one more allocation.)
pub(crate) struct Moved(std::cell::Cell<Option<Piece>>);

impl<T: Into<Piece>> From<T> for Moved {
    fn from(tokens: T) -> Self {
        Moved(std::cell::Cell::new(Some(tokens.into())))
    }
}

impl From<Option<TokenStream>> for Moved {
    fn from(stream: Option<TokenStream>) -> Self {
        Moved(std::cell::Cell::new(stream.map(Piece::Stream)))
    }
}

impl quote::ToTokens for Moved {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        if let Some(piece) = self.0.take() {
            piece.extend_by_move(tokens);
        }
    }
}

/// A named graph's items, each under the graph's `#[cfg(..)]` attributes
/// (so a graph compiled out leaves no item behind, and none that names it).
fn cfg_items(def: &GraphDef, items: TokenStream) -> TokenStream {
    let cfgs: Vec<&syn::Attribute> = def
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect();
    if cfgs.is_empty() {
        return items;
    }
    let Ok(file) = syn::parse2::<syn::File>(items.clone()) else {
        // Not reached with syn's full grammar; never compile the graph in
        // silently where its `#[cfg]` could not be applied.
        return quote::quote! {
            ::core::compile_error!("cuda_graph!: could not apply the graph's #[cfg] to its items");
        };
    };
    file.items
        .into_iter()
        .map(|item| quote::quote! { #(#cfgs)* #item })
        .collect()
}

/// `tokens` with every span set to `span`, so that an error about them
/// points there (a kernel path, reported at the edge that needs it; the
/// runtime's path, at the call site).
pub(super) fn respan(
    tokens: proc_macro2::TokenStream,
    span: proc_macro2::Span,
) -> proc_macro2::TokenStream {
    tokens
        .into_iter()
        .map(|mut tree| {
            if let proc_macro2::TokenTree::Group(group) = &tree {
                let mut inner =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                tree = proc_macro2::TokenTree::Group(inner);
            } else {
                tree.set_span(span);
            }
            tree
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::raw_str_literal;

    /// The raw literal reads back as the text, whatever quotes and hashes
    /// it holds; a carriage return falls back to an escaped literal.
    #[test]
    fn raw_string_literals_round_trip() {
        for text in [
            "",
            "digraph \"g\" {\n  \"a\" [label=\"a\\nkernel\"];\n}\n",
            "a \"# b \"## c",
            "ends with a quote\"",
            "carriage\r\nreturn",
        ] {
            let literal = raw_str_literal(text);
            let parsed: syn::LitStr = syn::parse2(quote::quote!(#literal)).unwrap();
            assert_eq!(parsed.value(), text);
            assert_eq!(literal.to_string().starts_with('r'), !text.contains('\r'));
        }
    }
}
