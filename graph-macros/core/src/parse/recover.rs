//! Node statements, and the near-misses among them that a newcomer writes:
//! a node without its label (`while again { .. }`, `kernel K<<<..>>>(..);`)
//! and an alloc scope without its body (`alloc scratch: f32[n];`). Each
//! near-miss is parsed whole, so that the statements after it still parse,
//! and recorded as an error that says what to write.

use super::*;

/// The node kinds whose keyword is an identifier, as a node statement
/// starts after its label (`alloc` is the alloc scope's keyword too; `host`
/// declares host buffers; `capture` may follow `unsafe`).
const NODE_WORDS: &[&str] = &[
    "kernel", "copy", "fill", "empty", "graph", "record", "wait", "alloc", "free", "switch",
];

/// The rest of a node statement after `label:`: its kind, and the `;`
/// (optional after a conditional node's bodies).
pub(super) fn node_stmt(
    input: ParseStream<'_>,
    attrs: Vec<Attribute>,
    label: Ident,
    errors: &mut Vec<syn::Error>,
) -> syn::Result<Stmt> {
    let kind = parse_node_kind(input, errors)?;
    if !kind.ends_with_block() || input.peek(Token![;]) {
        input.parse::<Token![;]>()?;
    }
    Ok(Stmt::Node(NodeStmt { attrs, label, kind }))
}

/// Whether the statement is a node written without its label: `if` or
/// `while` first, or a node keyword followed by what its node takes (an
/// edge from a node labelled like a keyword, `copy -> b`, is not one).
pub(super) fn is_unlabeled_node(input: ParseStream<'_>, first: Option<&str>) -> bool {
    input.peek(Token![if])
        || input.peek(Token![while])
        || (first.is_some_and(|word| NODE_WORDS.contains(&word))
            && (input.peek2(Ident) || input.peek2(Token![;])))
}

/// A node written without its label: parsed whole (an error in it is
/// reported instead), with an error at its keyword that asks for a label.
pub(super) fn unlabeled_node(
    input: ParseStream<'_>,
    attrs: Vec<Attribute>,
    errors: &mut Vec<syn::Error>,
) -> syn::Result<Stmt> {
    let at = input.span();
    let keyword = input
        .cursor()
        .token_tree()
        .map_or_else(String::new, |(token, _)| token.to_string());
    let stmt = node_stmt(input, attrs, Ident::new("unlabeled", at), errors)?;
    let example = match keyword.as_str() {
        "if" | "while" | "switch" => format!("step: {keyword} handle {{ ... }}"),
        _ => format!("step: {keyword} ...;"),
    };
    let article = if keyword.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    errors.push(syn::Error::new(
        at,
        crate::diag::with_help(
            format!("{article} `{keyword}` node needs a label"),
            format!("write its label first, `{example}`: edges, errors and the exec's accessors name the node by it"),
        ),
    ));
    Ok(stmt)
}

/// `alloc name: T[len]` followed by `;` rather than a body: the error says
/// which statement was meant.
pub(super) fn scope_without_body(input: ParseStream<'_>, buffer: &Ident) -> syn::Error {
    input.error(crate::diag::with_help(
        format!("an alloc scope needs a body: `alloc {buffer}: T[len] {{ ... }}`, whose nodes may use `{buffer}`"),
        format!("for an allocation node, freed by a `free` node or handed to the caller, write `{buffer}: alloc T[len];`"),
    ))
}
