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
            loop {
                if let Some((first, next)) = rest.punct() {
                    if first.as_char() == '=' && first.spacing() == Spacing::Joint {
                        if let Some((second, _)) = next.punct() {
                            if second.as_char() == '>' {
                                return Ok((src, rest));
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
                        return Err(syn::Error::new(
                            keyword.span,
                            "expected `=>`: a copy is written `copy SRC => DST`",
                        ))
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
        Err(lookahead.error())
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
    let args = Punctuated::parse_terminated(&content)?;
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
                syn::parse2::<Expr>(piece)
            }
        })
        .collect()
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
