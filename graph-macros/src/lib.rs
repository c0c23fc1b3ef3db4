//! The `cuda_graph!` procedural macro. This crate is only the entry point:
//! parsing, checking and code generation live in `graph-macros-core`. Use it
//! through `graph_runtime::cuda_graph`.

/// Declares a CUDA graph whose structure is checked when you run `cargo build`.
///
/// # Grammar
///
/// ```text
/// input      := item+ | expression
/// item       := attr* vis? "graph" Name "(" (param ("," param)*)? ")" block
/// expression := attr* "graph" "(" CTX_EXPR ")" block
/// block      := "{" stmt* "}"
/// stmt       := attr* label ":" node             // a node
///             | group (arrow group)+ ";"         // edges
///             | "cond" name ("=" EXPR)? ";"      // a conditional handle
///             | attr* "alloc" buf ":" TYPE "[" EXPR "]" block   // alloc scope
/// group      := label | "[" label ("," label)* "]"
/// arrow      := "->" | "-(programmatic)->" | "-(launch_order)->"
/// node       := "kernel" PATH "<<<" grid "," block ("," smem)? ">>>" "(" args ")" ";"
///             | "copy" SRC "=>" DST ";"         | "fill" DST "=" VALUE ";"
///             | "host" CLOSURE ";"              | "empty" ";"
///             | "graph" CHILD_EXPR ";"          | "record" EVENT ";"
///             | "wait" EVENT ";"                | "capture" |stream| BLOCK ";"
///             | "alloc" TYPE "[" LEN "]" ";"    | "free" buf ";"
///             | "if" cond block ("else" block)?
///             | "while" cond block
///             | "switch" cond "{" (INT "=>" block ","?)* "}"
/// ```
///
/// Graph attributes: `#[device_launch]`, `#[auto_free_on_launch]`,
/// `#[use_node_priority]`. Node attributes: `#[disabled]` (kernel, copy and
/// fill nodes start disabled), `#[priority(N)]` (kernel nodes, with
/// `#[use_node_priority]`), `#[escape]` (an alloc node whose buffer outlives
/// the graph and is handed to the caller).
///
/// An edge has no hidden meaning: nodes without edges between them may run
/// concurrently. The only edges you do not write are an alloc scope's: its
/// alloc node precedes every source of its body and its free node follows
/// every sink; the scope's name stands for the whole scope in edges.
///
/// # What is checked at compile time
///
/// - labels are unique and known; no self-edges, duplicate edges or cycles
///   (the whole cycle is named: `cycle: a -> b -> c -> a`); an edge never
///   crosses a conditional body's boundary;
/// - every use of a graph allocation is ordered after its alloc node and
///   before its free node; only graph allocations are freed, once; every
///   allocation is freed, escapes, or the graph is `#[auto_free_on_launch]`;
///   no alloc or free inside a conditional body; a scope's buffer is named
///   only inside the scope;
/// - a handle drives one conditional node; a handle without a default is set
///   upstream of its conditional node (by a kernel taking it as an
///   argument); a `while` body takes its handle; `switch` arms are exactly
///   `0..n`; conditional bodies hold only kernel, empty, copy, fill, child
///   graph and conditional nodes;
/// - a `#[device_launch]` graph holds only kernel, copy, fill and child graph
///   nodes; attributes apply to the node kinds that support them;
///   programmatic edges join kernel nodes.
///
/// Every error of one invocation is reported, each at the offending tokens.
///
/// # Examples, one per construct
///
/// A named graph type with kernel, copy, host nodes and a chain of edges:
///
/// ```
/// use graph_runtime::cuda_graph;
///
/// cuda_graph! {
///     pub graph Reduce(x_h: &[f32], x: &Vec<f32>, part: &Vec<f64>, out: &Vec<f64>, n: u32, blocks: u32) {
///         load:   copy x_h => x;                                   // memcpy H2D
///         stage1: kernel kernels::REDUCE<<<blocks, 256>>>(x, part, n);
///         stage2: kernel kernels::REDUCE_FINAL<<<1, 256>>>(part, out, blocks);
///         report: host move || println!("reduced");                 // host node
///         load -> stage1 -> stage2 -> report;
///     }
/// }
/// assert_eq!(Reduce::LABELS, ["load", "stage1", "stage2", "report"]);
/// ```
///
/// The expression form captures variables in scope:
///
/// ```
/// # use graph_runtime::cuda_graph;
/// let ctx = ();
/// let g = cuda_graph! {
///     graph(&ctx) {
///         a: empty;
///         b: empty;
///         a -> b;
///     }
/// };
/// assert_eq!(g.labels, ["a", "b"]);
/// # let _ = ctx;
/// ```
///
/// Fan-out and fan-in, memset, empty, child graph, event and capture nodes:
///
/// ```
/// # use graph_runtime::cuda_graph;
/// cuda_graph! {
///     graph Shapes(x: &Vec<f32>, ev: &u64) {
///         zero:  fill x = 0.0f32;
///         left:  kernel kernels::SCALE<<<1, 32>>>(x, 2.0f32);
///         right: kernel kernels::SCALE<<<1, 32>>>(x, 3.0f32);
///         join:  empty;
///         sub:   graph other.clone();
///         mark:  record ev;
///         after: wait ev;
///         blas:  capture |stream| { gemm(stream) };
///         zero -> [left, right] -> join -> sub -> mark -> after -> blas;
///     }
/// }
/// assert!(Shapes::DOT.contains("\"zero\" -> \"left\";"));
/// ```
///
/// Graph memory: an alloc node (its label names the buffer), a free node,
/// an escaping allocation, and an alloc scope:
///
/// ```
/// # use graph_runtime::cuda_graph;
/// cuda_graph! {
///     graph Memory(n: usize) {
///         tmp: alloc f32[n];
///         use_tmp: kernel kernels::K<<<1, 32>>>(tmp);
///         done: free tmp;
///         #[escape]
///         result: alloc f32[1];
///         alloc scratch: f32[n] {
///             s1: kernel kernels::K<<<1, 32>>>(scratch, result);
///         }
///         tmp -> use_tmp -> done -> scratch;
///         result -> scratch;
///     }
/// }
/// # assert_eq!(Memory::LABELS.len(), 5);
/// ```
///
/// Conditionals: a handle set by a kernel, IF/ELSE, WHILE and SWITCH, nested:
///
/// ```
/// # use graph_runtime::cuda_graph;
/// cuda_graph! {
///     graph Control(x: &Vec<f32>) {
///         cond go;
///         cond again = 1;
///         cond pick = 0;
///         decide: kernel kernels::SET_COND<<<1, 1>>>(go, 1u32);
///         branch: if go {
///             yes: kernel kernels::K<<<1, 32>>>(x);
///         } else {
///             no: empty;
///         }
///         repeat: while again {
///             step: kernel kernels::COUNTDOWN<<<1, 1>>>(again);
///         }
///         choose: switch pick {
///             0 => { first: empty; }
///             1 => { second: kernel kernels::K<<<1, 32>>>(x); }
///         }
///         decide -> branch -> repeat -> choose;
///     }
/// }
/// # assert!(Control::LABELS.contains(&"step"));
/// ```
///
/// Attributes, and programmatic dependent launch edges between kernels:
///
/// ```
/// # use graph_runtime::cuda_graph;
/// cuda_graph! {
///     #[use_node_priority]
///     graph Tuned(x: &Vec<f32>) {
///         #[priority(1)]
///         first: kernel kernels::K<<<1, 32>>>(x);
///         #[disabled]
///         second: kernel kernels::K<<<1, 32>>>(x);
///         first -(programmatic)-> second;
///     }
///
///     #[device_launch]
///     graph OnDevice(x: &Vec<f32>) {
///         step: kernel kernels::K<<<1, 32>>>(x);
///     }
/// }
/// # assert_eq!(OnDevice::LABELS, ["step"]);
/// ```
///
/// A mistake is a compile error at the tokens that caused it:
///
/// ```compile_fail
/// # use graph_runtime::cuda_graph;
/// cuda_graph! {
///     graph Loop() {
///         a: empty;
///         b: empty;
///         a -> b -> a; // error: cycle: a -> b -> a
///     }
/// }
/// ```
#[proc_macro]
pub fn cuda_graph(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    graph_macros_core::expand(input.into()).into()
}
