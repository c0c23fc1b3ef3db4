//! Node statements: each node kind's grammar, kernels' `<<<...>>>` included.

use super::*;
use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{bracketed, parenthesized, token, Expr, Token, Type};

pub(super) fn parse_element_type_and_len(input: ParseStream<'_>) -> syn::Result<(Type, Expr)> {
    let ty = Type::without_plus(input)?;
    if !input.peek(token::Bracket) {
        return Err(input.error("expected `[len]` after the element type, as in `f32[n]`"));
    }
    let content;
    bracketed!(content in input);
    let len: Expr = content.parse()?;
    if !content.is_empty() {
        return Err(content.error("expected `]` after the element count"));
    }
    Ok((ty, len))
}

/// `host name: T[len];`: page-locked host memory the graph owns, which copy
/// nodes fill or send to the device, host nodes read or write, and the exec
/// hands to the program between launches.
#[derive(Debug)]
pub struct HostDecl {
    pub attrs: Vec<syn::Attribute>,
    pub keyword: kw::host,
    pub name: Ident,
    pub ty: Type,
    pub len: Expr,
}

/// `buffer name: T[len];`: device memory the graph owns, which nodes use
/// like a buffer bound `&mut` and the exec lends to the program between
/// launches (`Graph::add_buffer`).
#[derive(Debug)]
pub struct BufferDecl {
    pub attrs: Vec<syn::Attribute>,
    pub keyword: kw::buffer,
    pub name: Ident,
    pub ty: Type,
    pub len: Expr,
}

/// `buffer name: T[len];`, after its attributes.
pub(super) fn parse_buffer_decl(
    input: ParseStream<'_>,
    attrs: Vec<syn::Attribute>,
) -> syn::Result<BufferDecl> {
    let keyword = input.parse()?;
    let name = input.parse()?;
    input.parse::<Token![:]>()?;
    let (ty, len) = parse_element_type_and_len(input)?;
    input.parse::<Token![;]>()?;
    Ok(BufferDecl {
        attrs,
        keyword,
        name,
        ty,
        len,
    })
}

/// `host name: T[len];`, after its attributes.
pub(super) fn parse_host_decl(
    input: ParseStream<'_>,
    attrs: Vec<syn::Attribute>,
) -> syn::Result<HostDecl> {
    let keyword = input.parse()?;
    let name = input.parse()?;
    input.parse::<Token![:]>()?;
    let (ty, len) = parse_element_type_and_len(input)?;
    input.parse::<Token![;]>()?;
    Ok(HostDecl {
        attrs,
        keyword,
        name,
        ty,
        len,
    })
}

impl NodeKind {
    pub(super) fn ends_with_block(&self) -> bool {
        matches!(
            self,
            NodeKind::If { .. } | NodeKind::While { .. } | NodeKind::Switch { .. }
        )
    }
}

pub(super) fn parse_node_kind(
    input: ParseStream<'_>,
    errors: &mut Vec<syn::Error>,
) -> syn::Result<NodeKind> {
    let lookahead = input.lookahead1();
    if lookahead.peek(kw::kernel) {
        parse_kernel(input).map(NodeKind::Kernel)
    } else if lookahead.peek(kw::copy) {
        let keyword: kw::copy = input.parse()?;
        // Split at the top-level `=>` first, so that a wrong arrow gets a
        // clear message rather than an expression error inside SRC.
        let src = input.step(|cursor| {
            let mut rest = *cursor;
            let mut src = TokenStream::new();
            // A `->` where the `=>` should be: the error points there.
            let mut wrong_arrow = None;
            loop {
                if let Some((first, next)) = rest.punct() {
                    if first.spacing() == Spacing::Joint {
                        if let Some((second, _)) = next.punct() {
                            if second.as_char() == '>' {
                                match first.as_char() {
                                    '=' => return Ok((src, rest)),
                                    '-' if wrong_arrow.is_none() => {
                                        let arrow: TokenStream =
                                            [TokenTree::Punct(first), TokenTree::Punct(second)]
                                                .into_iter()
                                                .collect();
                                        wrong_arrow = Some(arrow);
                                    }
                                    _ => {}
                                }
                            }
                        }
                    }
                }
                match rest.token_tree() {
                    Some((tt, next)) if !matches!(&tt, TokenTree::Punct(p) if p.as_char() == ';') =>
                    {
                        src.extend([tt]);
                        rest = next;
                    }
                    _ => {
                        return Err(match wrong_arrow {
                            Some(arrow) => syn::Error::new_spanned(
                                arrow,
                                "expected `=>`, found `->`: a copy is written `copy SRC => DST`",
                            ),
                            None => syn::Error::new(
                                keyword.span,
                                "expected `=>`: a copy is written `copy SRC => DST`",
                            ),
                        })
                    }
                }
            }
        })?;
        let src: Expr = syn::parse2(src)?;
        input.parse::<Token![=>]>()?;
        let dst: Expr = input.parse()?;
        Ok(NodeKind::Copy { keyword, src, dst })
    } else if lookahead.peek(kw::fill) {
        let keyword: kw::fill = input.parse()?;
        match input.parse::<Expr>()? {
            Expr::Assign(assign) => Ok(NodeKind::Fill {
                keyword,
                dst: *assign.left,
                value: *assign.right,
            }),
            other => Err(syn::Error::new_spanned(
                other,
                "expected `DST = VALUE`: a fill is written `fill buf = 0`",
            )),
        }
    } else if lookahead.peek(kw::host) {
        Ok(NodeKind::Host {
            keyword: input.parse()?,
            closure: input.parse()?,
        })
    } else if lookahead.peek(kw::empty) {
        Ok(NodeKind::Empty {
            keyword: input.parse()?,
        })
    } else if lookahead.peek(kw::graph) {
        Ok(NodeKind::Child {
            keyword: input.parse()?,
            graph: input.parse()?,
        })
    } else if lookahead.peek(kw::record) {
        Ok(NodeKind::Record {
            keyword: input.parse()?,
            event: input.parse()?,
        })
    } else if lookahead.peek(kw::wait) {
        Ok(NodeKind::Wait {
            keyword: input.parse()?,
            event: input.parse()?,
        })
    } else if lookahead.peek(Token![unsafe]) && input.peek2(kw::capture) {
        let unsafe_token = input.parse()?;
        let keyword = input.parse()?;
        let content;
        parenthesized!(content in input);
        let stream: Expr = content.parse()?;
        Ok(NodeKind::Capture {
            unsafe_token,
            keyword,
            stream,
            closure: input.parse()?,
        })
    } else if lookahead.peek(kw::capture) {
        let keyword: kw::capture = input.parse()?;
        Err(syn::Error::new(
            keyword.span,
            crate::diag::with_help(
                "a capture node is written `unsafe capture(stream) |s| { ... }`",
                "the graph cannot see the memory the captured work uses: by writing `unsafe` you promise it outlives the graph and its execs",
            ),
        ))
    } else if lookahead.peek(kw::alloc) {
        let keyword = input.parse()?;
        let (ty, len) = parse_element_type_and_len(input)?;
        Ok(NodeKind::Alloc { keyword, ty, len })
    } else if lookahead.peek(kw::free) {
        Ok(NodeKind::Free {
            keyword: input.parse()?,
            buffer: input.parse()?,
        })
    } else if lookahead.peek(Token![if]) {
        let keyword = input.parse()?;
        let handle = input.parse()?;
        let then_body = parse_block(input, errors)?;
        let else_body = if input.peek(Token![else]) {
            input.parse::<Token![else]>()?;
            Some(parse_block(input, errors)?)
        } else {
            None
        };
        Ok(NodeKind::If {
            keyword,
            handle,
            then_body,
            else_body,
        })
    } else if lookahead.peek(Token![while]) {
        Ok(NodeKind::While {
            keyword: input.parse()?,
            handle: input.parse()?,
            body: parse_block(input, errors)?,
        })
    } else if lookahead.peek(kw::switch) {
        let keyword = input.parse()?;
        let handle = input.parse()?;
        let content;
        let brace = braced!(content in input);
        let mut arms = Vec::new();
        while !content.is_empty() {
            let value: syn::LitInt = content.parse()?;
            content.parse::<Token![=>]>()?;
            let body = parse_block(&content, errors)?;
            arms.push(SwitchArm { value, body });
            if content.peek(Token![,]) {
                content.parse::<Token![,]>()?;
            }
        }
        Ok(NodeKind::Switch {
            keyword,
            handle,
            brace,
            arms,
        })
    } else {
        Err(super::recover::unknown_node_kind(input))
    }
}

fn parse_kernel(input: ParseStream<'_>) -> syn::Result<KernelNode> {
    let keyword = input.parse()?;
    let function = syn::Path::parse_mod_style(input)?;
    let launch_error =
        "expected `<<<grid, block>>>` or `<<<grid, block, shared_mem>>>` after the kernel";
    for _ in 0..3 {
        input
            .parse::<Token![<]>()
            .map_err(|e| syn::Error::new(e.span(), launch_error))?;
    }
    let config = parse_launch_config(input)?;
    let mut config = config.into_iter();
    let (grid, block, shared_mem) =
        match (config.next(), config.next(), config.next(), config.next()) {
            (Some(grid), Some(block), shared_mem, None) => (grid, block, shared_mem),
            _ => return Err(syn::Error::new(function.span(), launch_error)),
        };
    let content;
    let paren = parenthesized!(content in input);
    let args = Punctuated::parse_terminated_with(&content, parse_argument)?;
    Ok(KernelNode {
        keyword,
        function,
        grid,
        block,
        shared_mem,
        paren,
        args,
    })
}

/// Reads the comma-separated expressions up to `>>>`. Rust's expression
/// grammar would read `256>>>` as a shift, so the tokens are split by hand
/// (top-level `,` and `>>>`) and each piece is parsed as an expression.
fn parse_launch_config(input: ParseStream<'_>) -> syn::Result<Vec<Expr>> {
    let pieces = input.step(|cursor| {
        let mut rest = *cursor;
        let mut pieces: Vec<TokenStream> = vec![TokenStream::new()];
        loop {
            if let Some(after) = closing_chevrons(rest) {
                return Ok((pieces, after));
            }
            match rest.token_tree() {
                Some((TokenTree::Punct(p), next)) if p.as_char() == ',' => {
                    pieces.push(TokenStream::new());
                    rest = next;
                }
                Some((tt, next)) => {
                    if let Some(last) = pieces.last_mut() {
                        last.extend(std::iter::once(tt));
                    }
                    rest = next;
                }
                None => {
                    return Err(cursor.error("expected `>>>` to close the launch configuration"))
                }
            }
        }
    })?;
    pieces
        .into_iter()
        .map(|piece| {
            if piece.is_empty() {
                Err(input.error("expected an expression in the launch configuration"))
            } else {
                match single_token_expr(&piece) {
                    Some(expr) => Ok(expr),
                    None => syn::parse2::<Expr>(piece),
                }
            }
        })
        .collect()
}

/// A kernel argument: most are one identifier (a buffer, a parameter),
/// made into its path expression without syn's expression parser (a
/// tenth of the macro's time at 10,000 nodes went to parsing arguments
/// and launch configurations); anything else is parsed as an expression.
/// The expression is the one syn's parser makes, spans included.
fn parse_argument(input: ParseStream<'_>) -> syn::Result<Expr> {
    match plain_argument(input.cursor()) {
        Some((ident, _)) => {
            input.step(|cursor| match plain_argument(*cursor) {
                Some((_, rest)) => Ok(((), rest)),
                None => Err(cursor.error("expected an identifier")),
            })?;
            Ok(path_expr(ident))
        }
        None => input.parse(),
    }
}

/// The argument at `cursor` if it is one plain identifier token, followed
/// by `,` or the end, and the cursor after it. Token trees, not syn's
/// `ident()`/`punct()`: those look inside the invisible group a
/// `macro_rules!` fragment (`$x:expr`) arrives in, which syn's parser
/// keeps as `Expr::Group`.
fn plain_argument(cursor: syn::buffer::Cursor<'_>) -> Option<(Ident, syn::buffer::Cursor<'_>)> {
    let (TokenTree::Ident(ident), rest) = cursor.token_tree()? else {
        return None;
    };
    let ends = rest.eof()
        || matches!(rest.token_tree(), Some((TokenTree::Punct(p), _)) if p.as_char() == ',');
    (ends && is_plain(&ident)).then_some((ident, rest))
}

/// The expression of a launch-configuration piece of one token, a literal
/// or a plain identifier, as syn's parser makes it (`None`: anything
/// else, parsed by syn).
fn single_token_expr(piece: &TokenStream) -> Option<Expr> {
    let mut tokens = piece.clone().into_iter();
    let expr = match (tokens.next()?, tokens.next()) {
        (TokenTree::Literal(literal), None) => Expr::Lit(syn::ExprLit {
            attrs: Vec::new(),
            lit: syn::Lit::new(literal),
        }),
        (TokenTree::Ident(ident), None) if is_plain(&ident) => path_expr(ident),
        _ => return None,
    };
    Some(expr)
}

/// An identifier that syn's expression parser reads as a one-segment path:
/// not a keyword (`true`, `self`, `crate`, reserved words: syn reads those
/// otherwise, or refuses them), not `_`.
fn is_plain(ident: &Ident) -> bool {
    // One string, matched by length and bytes: cheaper than comparing the
    // identifier with each keyword in turn. (A raw identifier, `r#fn`,
    // matches none: a path, as syn reads it.)
    !matches!(
        ident.to_string().as_str(),
        "_" | "abstract"
            | "as"
            | "async"
            | "await"
            | "become"
            | "box"
            | "break"
            | "const"
            | "continue"
            | "crate"
            | "do"
            | "dyn"
            | "else"
            | "enum"
            | "extern"
            | "false"
            | "final"
            | "fn"
            | "for"
            | "gen"
            | "if"
            | "impl"
            | "in"
            | "let"
            | "loop"
            | "macro"
            | "match"
            | "mod"
            | "move"
            | "mut"
            | "override"
            | "priv"
            | "pub"
            | "ref"
            | "return"
            | "self"
            | "Self"
            | "static"
            | "struct"
            | "super"
            | "trait"
            | "true"
            | "try"
            | "type"
            | "typeof"
            | "union"
            | "unsafe"
            | "unsized"
            | "use"
            | "virtual"
            | "where"
            | "while"
            | "yield"
    )
}

/// `ident` as a path expression, as syn parses it.
pub(crate) fn path_expr(ident: Ident) -> Expr {
    Expr::Path(syn::ExprPath {
        attrs: Vec::new(),
        qself: None,
        path: syn::Path::from(ident),
    })
}

/// If the cursor is at `>>>`, returns the cursor after it.
fn closing_chevrons(cursor: syn::buffer::Cursor<'_>) -> Option<syn::buffer::Cursor<'_>> {
    let mut rest = cursor;
    for i in 0..3 {
        let (punct, next) = rest.punct()?;
        if punct.as_char() != '>' || (i < 2 && punct.spacing() != Spacing::Joint) {
            return None;
        }
        rest = next;
    }
    Some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse::Parser;

    /// The fast paths make the expressions syn's parser makes.
    #[test]
    fn arguments_and_launch_pieces_parse_as_syn_parses_them() {
        let args = "b0_buf, x, n, r#fn, 32u32, 1.5f32, 'c', \"s\", true, self, Self, crate, \
                    x.slice(0..4), -1, a + b, (y), _x, xs[w], f(x)";
        let (fast, slow) = fast_and_slow(args.parse().unwrap());
        assert_eq!(fast.unwrap(), slow.unwrap());
        // A `macro_rules!` fragment: an invisible group, kept by syn.
        let group = proc_macro2::Group::new(proc_macro2::Delimiter::None, quote::quote!(b));
        let (fast, slow) = fast_and_slow(quote::quote!(#group, x));
        let (fast, slow) = (fast.unwrap(), slow.unwrap());
        assert_eq!(fast, slow);
        assert!(matches!(fast.first(), Some(Expr::Group(_))));
        // The fast path is taken for a plain identifier, not for the rest.
        let taken = |text: &str| {
            let buffer = syn::buffer::TokenBuffer::new2(text.parse().unwrap());
            plain_argument(buffer.begin()).is_some()
        };
        assert!(taken("x") && taken("b0_buf, y") && taken("r#fn"));
        assert!(!taken("x.y") && !taken("x[0]") && !taken("true") && !taken("x as u32"));
        let grouped = syn::buffer::TokenBuffer::new2(quote::quote!(#group));
        assert!(plain_argument(grouped.begin()).is_none());
        for piece in [
            "1", "32", "n", "blocks", "r#type", "1u32", "true", "self", "-1", "n / 2",
        ] {
            let piece: TokenStream = piece.parse().unwrap();
            let slow: Expr = syn::parse2(piece.clone()).unwrap();
            if let Some(fast) = single_token_expr(&piece) {
                assert_eq!(fast, slow, "{piece}");
            }
        }
        assert!(single_token_expr(&"n".parse().unwrap()).is_some());
        assert!(single_token_expr(&"true".parse().unwrap()).is_none());
    }

    type Arguments = Punctuated<Expr, Token![,]>;

    /// `tokens` parsed as an argument list with the fast path, and with
    /// syn alone.
    fn fast_and_slow(tokens: TokenStream) -> (syn::Result<Arguments>, syn::Result<Arguments>) {
        let fast =
            (|input: ParseStream<'_>| Arguments::parse_terminated_with(input, parse_argument))
                .parse2(tokens.clone());
        (fast, Arguments::parse_terminated.parse2(tokens))
    }

    /// The fast path and syn alone give the same list, or the same error.
    fn agree(tokens: TokenStream) -> Result<(), String> {
        match fast_and_slow(tokens.clone()) {
            (Ok(a), Ok(b)) if a == b => Ok(()),
            (Err(a), Err(b)) if a.to_string() == b.to_string() => Ok(()),
            (a, b) => Err(format!("{tokens}: {a:?} against {b:?}")),
        }
    }

    proptest::proptest! {
        /// Any list of these pieces, with or without commas between them,
        /// some inside a `macro_rules!` fragment's invisible group.
        #[test]
        fn any_argument_list_parses_as_syn_parses_it(
            pieces in proptest::collection::vec(
                (0usize..24, proptest::bool::ANY, proptest::bool::ANY),
                0..6,
            )
        ) {
            const PIECES: [&str; 24] = [
                "x", "b0_buf", "r#fn", "self", "true", "_", "union", "dyn", "32u32", "1.5",
                "-1", "x.y", "x[0]", "x as u32", "f(x)", "(y)", "a + b", "'c'", "\"s\"",
                "crate::k", "Self", "move", "x!()", "&mut x",
            ];
            let mut tokens = TokenStream::new();
            for (piece, grouped, comma) in &pieces {
                let piece: TokenStream = PIECES[*piece].parse().unwrap();
                if *grouped {
                    let group = proc_macro2::Group::new(proc_macro2::Delimiter::None, piece);
                    tokens.extend([TokenTree::Group(group)]);
                } else {
                    tokens.extend(piece);
                }
                if *comma {
                    tokens.extend(quote::quote!(,));
                }
            }
            proptest::prop_assert_eq!(agree(tokens), Ok(()));
        }
    }
}
