//! The `cuda_graph!` procedural macro. This crate is only the entry point:
//! parsing, checking and code generation live in `graph-macros-core`. Use it
//! through `graph_runtime::cuda_graph`, whose documentation holds the grammar.

/// Declares a CUDA graph, checked at compile time. See
/// `graph_runtime::cuda_graph` for the grammar and examples.
#[proc_macro]
pub fn cuda_graph(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    graph_macros_core::expand(input.into()).into()
}
