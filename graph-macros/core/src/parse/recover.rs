//! Node statements, and the near-misses among them that a newcomer writes:
//! a node or a repeated block without its label (`while again { .. }`,
//! `kernel K<<<..>>>(..);`, `for i in 0..n { .. }`), a label that is a
//! Rust keyword (`loop: ..`), a typed handle (`cond go: u32 = 1;`), a
//! misspelled node kind (`kernal`) and an alloc scope without its body
//! (`alloc scratch: f32[n];`). Each near-miss is parsed whole where it can
//! be, so that the statements after it still parse, and recorded as an
//! error that says what to write.

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

/// `for i in 0..n { .. }` without its label: parsed whole, with an error
/// at `for` that asks for one.
pub(super) fn unlabeled_repeat(
    input: ParseStream<'_>,
    attrs: Vec<Attribute>,
    errors: &mut Vec<syn::Error>,
) -> syn::Result<RepeatBlock> {
    let at = input.span();
    let block = super::repeat::parse_repeat(input, attrs, Ident::new("unlabeled", at), errors)?;
    errors.push(syn::Error::new(
        at,
        crate::diag::with_help(
            "a repeated block needs a label",
            format!(
                "write its label first, `layer: for {} in ..`: edges name the block by it, and its nodes' labels (`layer[3].node`) in errors and profiles",
                block.var
            ),
        ),
    ));
    Ok(block)
}

/// `loop: ..`: a Rust keyword where a label goes.
pub(super) fn keyword_label(input: ParseStream<'_>, keyword: &str) -> syn::Error {
    input.error(crate::diag::with_help(
        format!("`{keyword}` is a Rust keyword, which cannot be a label"),
        format!("give the node another name (`{keyword}_`, say)"),
    ))
}

/// `cond go: u32 = 1;`: the type parsed and reported, the rest parses on.
pub(super) fn typed_handle(input: ParseStream<'_>, name: &Ident) -> syn::Result<syn::Error> {
    let colon: Token![:] = input.parse()?;
    let ty: syn::Type = input.parse()?;
    Ok(syn::Error::new_spanned(
        quote::quote!(#colon #ty),
        crate::diag::with_help(
            "a conditional handle takes no type: its value is always a `u32`",
            format!("write `cond {name};`, or `cond {name} = 1;` for a default"),
        ),
    ))
}

/// The node kinds, for a misspelled one.
const NODE_KINDS: &[&str] = &[
    "kernel", "copy", "fill", "host", "empty", "graph", "record", "wait", "capture", "alloc",
    "free", "if", "while", "switch",
];

/// A node kind as a node statement spells it.
fn spelled(kind: &str) -> &str {
    match kind {
        "capture" => "unsafe capture",
        other => other,
    }
}

/// A node kind that is none of them: the closest, if one is close.
pub(super) fn unknown_node_kind(input: ParseStream<'_>) -> syn::Error {
    let word = input.cursor().ident().map(|(ident, _)| ident.to_string());
    let closest = word.as_deref().and_then(|word| {
        NODE_KINDS
            .iter()
            .map(|kind| (strsim::damerau_levenshtein(word, kind), *kind))
            .filter(|&(distance, kind)| distance <= 2 && distance < kind.len())
            .min()
            .map(|(_, kind)| kind)
    });
    let kinds: String = NODE_KINDS
        .iter()
        .enumerate()
        .map(|(i, kind)| {
            let before = match i {
                0 => "",
                i if i + 1 == NODE_KINDS.len() => " or ",
                _ => ", ",
            };
            format!("{before}`{}`", spelled(kind))
        })
        .collect();
    let message = match (&word, closest) {
        (Some(word), Some(kind)) => {
            format!(
                "unknown node kind `{word}`: did you mean `{}`?",
                spelled(kind)
            )
        }
        (Some(word), None) => format!("unknown node kind `{word}`"),
        (None, _) => "expected a node kind".to_string(),
    };
    input.error(crate::diag::with_help(
        message,
        format!("a node is `label: kind ...;`, its kind one of {kinds}"),
    ))
}
