//! The `cuda_graph!` procedural macro. This crate is only the entry point:
//! parsing, checking and code generation live in `graph-macros-core`. Use it
//! through `graph_runtime::cuda_graph`, where it is documented.

// Documented where it is used, `graph_runtime::cuda_graph!` (its examples
// need the runtime, which depends on this crate).
#[proc_macro]
pub fn cuda_graph(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    graph_macros_core::expand(input.into()).into()
}
