//! Syntax tree of the `cuda_graph!` DSL and its parser.
//!
//! The parser only recognises shapes; every semantic rule (labels, ordering,
//! memory, conditionals) lives in `check`. It recovers at statement
//! boundaries so that one invocation reports every syntax error it holds.

mod edge;
mod node;
mod plain;
mod recover;
mod repeat;

use edge::{edge_attribute, parse_edge};
pub(crate) use node::path_expr;
use node::{parse_element_type_and_len, parse_node_kind};
pub use node::{BufferDecl, HostDecl};
use proc_macro2::{Span, TokenStream, TokenTree};
use repeat::parse_repeat;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{braced, parenthesized, token, Attribute, Expr, Ident, Token, Type};

/// Keywords of the DSL that are not Rust keywords.
pub mod kw {
    syn::custom_keyword!(graph);
    syn::custom_keyword!(kernel);
    syn::custom_keyword!(copy);
    syn::custom_keyword!(fill);
    syn::custom_keyword!(host);
    syn::custom_keyword!(buffer);
    syn::custom_keyword!(empty);
    syn::custom_keyword!(record);
    syn::custom_keyword!(wait);
    syn::custom_keyword!(capture);
    syn::custom_keyword!(alloc);
    syn::custom_keyword!(free);
    syn::custom_keyword!(cond);
    syn::custom_keyword!(switch);
    syn::custom_keyword!(programmatic);
    syn::custom_keyword!(launch_order);
    syn::custom_keyword!(fragment);
}

/// A whole macro input: one or more named graph types, or one graph expression.
#[derive(Debug)]
pub enum Input {
    /// `pub graph Name(params) { ... }`, possibly several.
    Items(Vec<GraphDef>),
    /// `graph(&ctx) { ... }`: evaluates to a graph built from captured variables.
    Expr(Box<GraphDef>),
}

/// One `graph` definition, named (item form) or not (expression form).
#[derive(Debug)]
pub struct GraphDef {
    pub attrs: Vec<Attribute>,
    pub vis: syn::Visibility,
    pub graph_token: kw::graph,
    /// The type name in the item form.
    pub name: Option<Ident>,
    /// Item form: the parameters of the generated `build` function.
    pub params: Vec<Param>,
    /// Expression form: the expression giving the CUDA context.
    pub context: Option<Expr>,
    pub body: Block,
    /// Whether a statement of it failed to parse (and was left out): its
    /// errors are reported, and the rest of it is not checked (the checks
    /// would report what the missing statement did).
    pub broken: bool,
}

/// A parameter of an item-form graph: `name: Type`.
#[derive(Debug)]
pub struct Param {
    pub name: Ident,
    pub ty: Type,
}

/// A braced list of statements: a graph body, a conditional body or an
/// alloc scope's body.
#[derive(Debug)]
pub struct Block {
    pub brace: token::Brace,
    pub stmts: Vec<Stmt>,
}

#[derive(Debug)]
pub enum Stmt {
    Node(NodeStmt),
    Edge(EdgeStmt),
    Cond(CondDecl),
    Host(HostDecl),
    Buffer(BufferDecl),
    Scope(AllocScope),
    Repeat(RepeatBlock),
    Fragment(Fragment),
    Place(Placement),
}

/// `fragment name { ... }`: nodes written once, placed where
/// `label: use name;` says (each placement checked where it is).
#[derive(Debug)]
pub struct Fragment {
    pub attrs: Vec<Attribute>,
    pub keyword: kw::fragment,
    pub name: Ident,
    pub body: Block,
}

/// `label: use name;`: a copy of fragment `name`, its labels `label.x`; in
/// edges, `label` stands for it as a block does.
#[derive(Debug)]
pub struct Placement {
    pub attrs: Vec<Attribute>,
    pub label: Ident,
    pub use_token: Token![use],
    pub fragment: Ident,
}

/// `label: for i in 0..count { ... }`: the body once per iteration, `i`
/// from 0 to `count - 1` (evaluated when the graph is built). In edges
/// outside the block, `label` stands for every iteration; inside it, a
/// label names this iteration's node and `label[i-k]` that of the
/// iteration `k` before.
#[derive(Debug)]
pub struct RepeatBlock {
    pub attrs: Vec<Attribute>,
    pub label: Ident,
    pub for_token: Token![for],
    /// The loop variable (a `usize` in the body's expressions).
    pub var: Ident,
    /// `0..count`, as written (for error spans).
    pub range: TokenStream,
    pub count: Expr,
    pub body: Block,
}

/// `#[attrs] label: kind ...;`
#[derive(Debug)]
pub struct NodeStmt {
    pub attrs: Vec<Attribute>,
    pub label: Ident,
    pub kind: NodeKind,
}

// Boxing the large variants would buy nothing: one NodeKind per statement.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum NodeKind {
    Kernel(KernelNode),
    Copy {
        keyword: kw::copy,
        src: Expr,
        dst: Expr,
    },
    Fill {
        keyword: kw::fill,
        dst: Expr,
        value: Expr,
    },
    Host {
        keyword: kw::host,
        closure: Expr,
    },
    Empty {
        keyword: kw::empty,
    },
    Child {
        keyword: kw::graph,
        graph: Expr,
    },
    Record {
        keyword: kw::record,
        event: Expr,
    },
    Wait {
        keyword: kw::wait,
        event: Expr,
    },
    /// `unsafe capture(STREAM) |s| { ... }`
    Capture {
        unsafe_token: Token![unsafe],
        keyword: kw::capture,
        stream: Expr,
        closure: syn::ExprClosure,
    },
    Alloc {
        keyword: kw::alloc,
        ty: Type,
        len: Expr,
    },
    Free {
        keyword: kw::free,
        buffer: Ident,
    },
    If {
        keyword: Token![if],
        handle: Ident,
        then_body: Block,
        else_body: Option<Block>,
    },
    While {
        keyword: Token![while],
        handle: Ident,
        body: Block,
    },
    Switch {
        keyword: kw::switch,
        handle: Ident,
        brace: token::Brace,
        arms: Vec<SwitchArm>,
    },
}

/// `kernel PATH<<<grid, block[, smem]>>>(args)`
#[derive(Debug)]
pub struct KernelNode {
    pub keyword: kw::kernel,
    pub function: syn::Path,
    pub grid: Expr,
    pub block: Expr,
    pub shared_mem: Option<Expr>,
    /// The argument list's parentheses (a wrong count is reported there).
    pub paren: token::Paren,
    pub args: Punctuated<Expr, Token![,]>,
}

/// `N => { ... }` inside a `switch`.
#[derive(Debug)]
pub struct SwitchArm {
    pub value: syn::LitInt,
    pub body: Block,
}

/// `cond name;` or `cond name = default;`
#[derive(Debug)]
pub struct CondDecl {
    pub attrs: Vec<Attribute>,
    pub keyword: kw::cond,
    pub name: Ident,
    pub default: Option<Expr>,
}

/// `alloc buf: T[len] { ... }`: an allocation whose alloc node precedes every
/// source of the body and whose free node follows every sink.
#[derive(Debug)]
pub struct AllocScope {
    pub attrs: Vec<Attribute>,
    pub keyword: kw::alloc,
    pub buffer: Ident,
    pub ty: Type,
    pub len: Expr,
    pub body: Block,
}

/// `a -> [b, c] -(programmatic)-> d;`, or `#[launch_order] a -> b -> c;`
/// (every plain arrow of the statement takes the attribute's kind).
#[derive(Debug)]
pub struct EdgeStmt {
    /// One more group than links.
    pub groups: Vec<EdgeGroup>,
    pub links: Vec<EdgeLink>,
}

/// One step of an edge chain: a label or a bracketed list of labels.
#[derive(Debug)]
pub struct EdgeGroup {
    pub labels: Vec<EdgeLabel>,
}

/// A label in an edge: `step`, or `step[i-1]` (inside a repeated block,
/// the node of an earlier iteration).
#[derive(Debug, Clone)]
pub struct EdgeLabel {
    pub label: Ident,
    pub index: Option<LabelIndex>,
}

/// `[i]` or `[i-k]` after a label.
#[derive(Debug, Clone)]
pub struct LabelIndex {
    /// The loop variable it indexes by.
    pub var: Ident,
    /// How many iterations back (`k` of `i-k`; 0 for `[i]`).
    pub back: usize,
    /// The label with its brackets, for error spans.
    pub tokens: TokenStream,
}

impl EdgeLabel {
    /// The label with its index, as messages quote it (`step[i-1]`).
    pub fn text(&self) -> String {
        match &self.index {
            Some(LabelIndex { var, back: 0, .. }) => format!("{}[{var}]", self.label),
            Some(LabelIndex { var, back, .. }) => format!("{}[{var}-{back}]", self.label),
            None => self.label.to_string(),
        }
    }

    /// The label with its index, as written (for error spans).
    pub fn tokens(&self) -> TokenStream {
        match &self.index {
            Some(index) => index.tokens.clone(),
            None => quote::ToTokens::to_token_stream(&self.label),
        }
    }
}

/// The arrow between two groups, with the kind of dependency it carries.
#[derive(Debug, Clone)]
pub struct EdgeLink {
    pub kind: EdgeKind,
    /// The arrow's tokens, for error spans.
    pub tokens: TokenStream,
    /// Where errors about the edge's kind point: `(programmatic)`, or the
    /// `->` of a statement marked `#[programmatic]`.
    pub span: Span,
}

/// What an edge carries (CUDA 12.3+ edge data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    /// `->`: the downstream node starts after the upstream one completes.
    Full,
    /// `-(programmatic)->`: programmatic dependent launch, triggered by the
    /// upstream kernel's `griddepcontrol.launch_dependents`.
    Programmatic,
    /// `-(launch_order)->`: programmatic dependent launch ordered by launch.
    LaunchOrder,
}

/// Parses a whole macro input, recovering at statement boundaries: the
/// syntax tree, with the errors of the statements left out of it (their
/// graphs are marked `broken`).
///
/// # Errors
/// Every syntax error found, each at its tokens, when one broke the input
/// beyond a statement (a graph's header, say).
pub fn parse_input(tokens: TokenStream) -> Result<(Input, Vec<syn::Error>), Vec<syn::Error>> {
    let tokens = plain::plain_identifiers(tokens)?;
    let mut errors = Vec::new();
    let parser = |input: ParseStream<'_>| parse_input_stream(input, &mut errors);
    match syn::parse::Parser::parse2(parser, tokens) {
        Ok(parsed) => Ok((parsed, errors)),
        Err(e) => {
            errors.push(e);
            Err(errors)
        }
    }
}

fn parse_input_stream(input: ParseStream<'_>, errors: &mut Vec<syn::Error>) -> syn::Result<Input> {
    if input.is_empty() {
        return Err(
            input.error("expected a graph: `graph Name(params) { ... }` or `graph(&ctx) { ... }`")
        );
    }
    let mut items = Vec::new();
    while !input.is_empty() {
        let before = errors.len();
        let mut def = parse_graph_def(input, errors)?;
        def.broken = errors.len() > before;
        if def.name.is_none() {
            if !items.is_empty() || !input.is_empty() {
                return Err(syn::Error::new(
                    def.graph_token.span,
                    "a graph expression `graph(ctx) { ... }` must be the only graph in the macro call",
                ));
            }
            return Ok(Input::Expr(Box::new(def)));
        }
        items.push(def);
    }
    Ok(Input::Items(items))
}

fn parse_graph_def(input: ParseStream<'_>, errors: &mut Vec<syn::Error>) -> syn::Result<GraphDef> {
    let attrs = input.call(Attribute::parse_outer)?;
    let vis: syn::Visibility = input.parse()?;
    let graph_token: kw::graph = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected `graph`: write `graph Name(params) { ... }` or `graph(&ctx) { ... }`",
        )
    })?;
    let (name, params, context) = if input.peek(Ident) {
        let name: Ident = input.parse()?;
        let content;
        parenthesized!(content in input);
        let mut params = Vec::new();
        while !content.is_empty() {
            let name: Ident = content.parse()?;
            content.parse::<Token![:]>()?;
            let ty: Type = content.parse()?;
            params.push(Param { name, ty });
            if content.is_empty() {
                break;
            }
            content.parse::<Token![,]>()?;
        }
        (Some(name), params, None)
    } else if input.peek(token::Paren) {
        if !matches!(vis, syn::Visibility::Inherited) {
            return Err(syn::Error::new(
                vis.span(),
                "a graph expression has no visibility: remove it, or name the graph to declare a type",
            ));
        }
        let content;
        parenthesized!(content in input);
        let context: Expr = content.parse()?;
        if !content.is_empty() {
            return Err(content.error("expected one expression: the CUDA context"));
        }
        (None, Vec::new(), Some(context))
    } else {
        return Err(input.error(
            "expected a graph name (`graph Name(params) { ... }`) or a context (`graph(&ctx) { ... }`)",
        ));
    };
    let body = parse_block(input, errors)?;
    Ok(GraphDef {
        attrs,
        vis,
        graph_token,
        name,
        params,
        context,
        body,
        broken: false,
    })
}

/// Parses `{ stmts }`, recording statement errors in `errors` and skipping to
/// the next `;` so that later statements are still parsed.
fn parse_block(input: ParseStream<'_>, errors: &mut Vec<syn::Error>) -> syn::Result<Block> {
    let content;
    let brace = braced!(content in input);
    let mut stmts = Vec::new();
    while !content.is_empty() {
        if content.peek(Token![;]) {
            content.parse::<Token![;]>()?;
            continue;
        }
        let fork = content.fork();
        match parse_stmt(&fork, errors) {
            Ok(stmt) => {
                syn::parse::discouraged::Speculative::advance_to(&content, &fork);
                stmts.push(stmt);
            }
            Err(e) => {
                errors.push(e);
                skip_past_semicolon(&content)?;
            }
        }
    }
    Ok(Block { brace, stmts })
}

fn skip_past_semicolon(input: ParseStream<'_>) -> syn::Result<()> {
    while !input.is_empty() {
        if input.peek(Token![;]) {
            input.parse::<Token![;]>()?;
            break;
        }
        input.parse::<TokenTree>()?;
    }
    Ok(())
}

fn parse_stmt(input: ParseStream<'_>, errors: &mut Vec<syn::Error>) -> syn::Result<Stmt> {
    let attrs = input.call(Attribute::parse_outer)?;
    if input.peek(token::Bracket) {
        let kind = edge_attribute(&attrs)?;
        return parse_edge(input, kind).map(Stmt::Edge);
    }
    // The leading identifier's text, compared with each keyword below: a
    // keyword's `peek` copies the identifier (and inside rustc makes its
    // text) anew each time.
    let first = input.cursor().ident().map(|(ident, _)| ident.to_string());
    let starts_with = |keyword: &str| first.as_deref() == Some(keyword);
    if starts_with("cond") && input.peek2(Ident) {
        let keyword = input.parse()?;
        let name = input.parse()?;
        if input.peek(Token![:]) {
            errors.push(recover::typed_handle(input, &name)?);
        }
        let default = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            Some(input.parse()?)
        } else {
            None
        };
        input.parse::<Token![;]>()?;
        return Ok(Stmt::Cond(CondDecl {
            attrs,
            keyword,
            name,
            default,
        }));
    }
    if starts_with("host") && input.peek2(Ident) && input.peek3(Token![:]) {
        return node::parse_host_decl(input, attrs).map(Stmt::Host);
    }
    if starts_with("buffer") && input.peek2(Ident) && input.peek3(Token![:]) {
        return node::parse_buffer_decl(input, attrs).map(Stmt::Buffer);
    }
    if starts_with("fragment") && input.peek2(Ident) {
        let keyword = input.parse()?;
        let name = input.parse()?;
        let body = parse_block(input, errors)?;
        return Ok(Stmt::Fragment(Fragment {
            attrs,
            keyword,
            name,
            body,
        }));
    }
    if starts_with("alloc") && input.peek2(Ident) && input.peek3(Token![:]) {
        let keyword = input.parse()?;
        let buffer = input.parse()?;
        input.parse::<Token![:]>()?;
        let (ty, len) = parse_element_type_and_len(input)?;
        if input.peek(Token![;]) {
            return Err(recover::scope_without_body(input, &buffer));
        }
        let body = parse_block(input, errors)?;
        return Ok(Stmt::Scope(AllocScope {
            attrs,
            keyword,
            buffer,
            ty,
            len,
            body,
        }));
    }
    if input.peek(Ident) && input.peek2(Token![:]) && !input.peek2(Token![::]) {
        let label: Ident = input.parse()?;
        input.parse::<Token![:]>()?;
        if input.peek(Token![for]) {
            return parse_repeat(input, attrs, label, errors).map(Stmt::Repeat);
        }
        if input.peek(Token![use]) {
            let use_token = input.parse()?;
            let fragment = input.parse()?;
            input.parse::<Token![;]>()?;
            return Ok(Stmt::Place(Placement {
                attrs,
                label,
                use_token,
                fragment,
            }));
        }
        return recover::node_stmt(input, attrs, label, errors);
    }
    if recover::is_unlabeled_node(input, first.as_deref()) {
        return recover::unlabeled_node(input, attrs, errors);
    }
    if input.peek(Token![for]) {
        return recover::unlabeled_repeat(input, attrs, errors).map(Stmt::Repeat);
    }
    if let Some(keyword) = first.as_deref().filter(|_| input.peek2(Token![:])) {
        if !input.peek(Ident) {
            return Err(recover::keyword_label(input, keyword));
        }
    }
    if input.peek(Ident) {
        let kind = edge_attribute(&attrs)?;
        return parse_edge(input, kind).map(Stmt::Edge);
    }
    Err(input.error(
        "expected a statement: a node `label: kind ...;`, an edge `a -> b;`, \
         `cond name;`, `alloc buf: T[len] { ... }`, `label: for i in 0..n { ... }`, \
         `fragment name { ... }`, `label: use name;`, `host name: T[len];` or \
         `buffer name: T[len];`",
    ))
}

impl Parse for Input {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut errors = Vec::new();
        let parsed = parse_input_stream(input, &mut errors)?;
        match crate::diag::combine(errors) {
            Some(e) => Err(e),
            None => Ok(parsed),
        }
    }
}
