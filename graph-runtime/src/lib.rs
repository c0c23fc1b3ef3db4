//! CUDA graphs for Rust: the `cuda_graph!` macro and the runtime it expands to.

pub use graph_macros::cuda_graph;

/// What a graph expression (`cuda_graph! { graph(&ctx) { ... } }`) evaluates
/// to: its node labels and its Graphviz DOT text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphOutline {
    /// The labels of the graph's nodes, in source order.
    pub labels: &'static [&'static str],
    /// The graph in Graphviz DOT.
    pub dot: &'static str,
}
