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
/// expression := "graph" "(" CTX_EXPR ")" block
/// block      := "{" stmt* "}"
/// stmt       := attr* label ":" node             // a node
///             | edge_attr? group (arrow group)+ ";"   // edges
///             | "cond" name ("=" EXPR)? ";"      // a conditional handle
///             | attr* "alloc" buf ":" TYPE "[" EXPR "]" block   // alloc scope
///             | attr* label ":" "for" VAR "in" "0" ".." COUNT block // repeated block
///             | "fragment" NAME block                // nodes written once (graph top only)
///             | label ":" "use" NAME ";"             // a fragment placed here
/// group      := label | "[" label ("," label)* "]"
/// label      := LABEL | LABEL "[" VAR "]" | LABEL "[" VAR "-" INT "]"  // indexed: in a repeated block
/// arrow      := "->" | "-(programmatic)->" | "-(launch_order)->"
/// edge_attr  := "#[programmatic]" | "#[launch_order]"  // every "->" of the statement
/// node       := "kernel" PATH "<<<" grid "," block ("," smem)? ">>>" "(" args ")" ";"
///             | "copy" SRC "=>" DST ";"         | "fill" DST "=" VALUE ";"
///             | "host" CLOSURE ";"              | "empty" ";"
///             | "graph" CHILD_EXPR ";"          | "record" EVENT ";"
///             | "wait" EVENT ";"                | "unsafe" "capture" "(" STREAM ")" CLOSURE ";"
///             | "alloc" TYPE "[" LEN "]" ";"    | "free" buf ";"
///             | "if" cond block ("else" block)?
///             | "while" cond block
///             | "switch" cond "{" (INT "=>" block ","?)* "}"
/// ```
///
/// Graph attributes: `#[device_launch]`, `#[auto_free_on_launch]`,
/// `#[use_node_priority]`, `#[crate_path = path]` (generated code names the
/// runtime `::graph_runtime`; a crate that renamed the dependency, or reaches
/// it through a re-export, gives its path here); `///` docs, `#[allow]` and `#[cfg_attr]` go to the
/// graph's type, and `#[cfg(..)]` on a named graph to every item it
/// generates (the generated types derive `Debug`; `#[derive]` is refused).
/// Node attributes: `#[disabled]` (kernel, copy and
/// fill nodes start disabled), `#[priority(N)]` (kernel nodes, with
/// `#[use_node_priority]`), `#[disjoint]` / `#[disjoint(x, ..)]` (see the
/// race check below), `#[escape]` (an alloc node whose buffer outlives
/// the graph's launch: its buffer is in `bound()`, and after a launch
/// `exec.take_escaped(buf)` hands the allocation out as an owned
/// [`Escaped<T>`](../graph_runtime/struct.Escaped.html), which cudarc reads
/// and writes and dropping frees; until it is freed, the exec does not
/// launch again. Not taken, it is freed by the next launch or the exec's
/// drop).
///
/// A parameter of type `Escaped<T>` binds an allocation another graph
/// made: nodes use it like a buffer, and `done: free data;` frees it (the
/// runtime checks, when the graph is built, that its uses come before the
/// free). The two graphs then launch in turn, as in the Programming
/// Guide's producer and consumer: the allocation keeps its address from
/// launch to launch, every launch waits for the one before on the
/// allocation, and a launch out of turn is refused with an error naming
/// the alloc node.
///
/// ```
/// use graph_runtime::cudarc::driver::CudaSlice;
/// use graph_runtime::{cuda_graph, Escaped};
///
/// cuda_graph! {
///     graph Make(n: u32) {
///         #[escape]
///         data: alloc f32[n];
///         fill: kernel kernels::Iota<<<n.div_ceil(256), 256>>>(data, n);
///         data -> fill;
///     }
///
///     graph UseAndFree(data: Escaped<f32>, out: &mut CudaSlice<f32>, n: u32) {
///         bump: kernel kernels::AddOne<<<n.div_ceil(256), 256>>>(data, n);
///         copy: copy data => out;
///         done: free data;
///         bump -> copy -> done;
///     }
/// }
///
/// fn run(ctx: &std::sync::Arc<graph_runtime::cudarc::driver::CudaContext>) -> graph_runtime::Result<()> {
///     let stream = ctx.new_stream().unwrap();
///     let mut out = stream.alloc_zeros::<f32>(1024).unwrap();
///     let make = Make::build(ctx, 1024)?;
///     let data = make.bound().data;
///     let mut maker = make.instantiate()?;
///     maker.launch(&stream)?;
///     let consume = UseAndFree::build(ctx, maker.take_escaped(data)?, &mut out, 1024)?;
///     let mut consumer = consume.instantiate()?;
///     for _ in 0..3 {
///         consumer.launch(&stream)?; // uses and frees it
///         maker.launch(&stream)?; // makes it again, at the same address
///     }
///     consumer.launch(&stream)?;
///     consumer.synchronize()
/// }
/// ```
///
/// `kernel PATH` names a kernel declared with
/// [`declare_kernel!`](../graph_runtime/macro.declare_kernel.html): each
/// argument is type-checked against the declaration, with the error at the
/// argument; counts and indices declared `Len`/`Index` are checked against
/// the kernel's buffers when the graph is built and when an exec's
/// arguments change. Parameters typed `&CudaSlice<T>` (read) or `&mut CudaSlice<T>`
/// (written) are bound to the graph for its lifetime and its execs';
/// cudarc's per-slice event tracking covers every launch.
///
/// An edge has no hidden meaning: nodes without edges between them may run
/// concurrently. The only edges you do not write are an alloc scope's: its
/// alloc node precedes every source of its body and its free node follows
/// every sink; the scope's name stands for the whole scope in edges.
///
/// `capture` is written `unsafe capture(stream) |s| { ... }` (the design
/// sketch had no `unsafe` and no stream). `s` is a
/// [`Capture`](../graph_runtime/capture/struct.Capture.html): `s.stream()`
/// is the (non-legacy) stream captured on, and `s.read(x)` / `s.write(x)`
/// are views of the graph's buffers that cudarc's calls (cuBLAS's, kernel
/// launches) take, used like a kernel node's arguments (with cudarc's event
/// tracking on). The graph cannot see other memory the work touches, so by
/// writing `unsafe` the caller promises it outlives the graph. A capture whose closure
/// names a conditional handle sets it (its captured kernels call
/// `cudaGraphSetConditional` with `handle.raw()`), so a `while` can be
/// driven by captured work, and the setter rules below apply to it. A
/// capture may sit in a conditional body; what it captured is checked when
/// the graph is built: memory nodes (captured `cudaMallocAsync` and
/// `cudaFreeAsync`) anywhere, and in a body anything but kernel, device
/// copy, fill, empty, child graph and conditional nodes, are refused,
/// naming the node.
///
/// ```
/// use graph_runtime::cuda_graph;
/// use graph_runtime::cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
/// use graph_runtime::kernel::KernelDef;
/// use std::sync::Arc;
///
/// cuda_graph! {
///     /// Counts `counter` down to zero, one captured launch per iteration.
///     graph CapturedCountdown(stream: &Arc<CudaStream>, counter: &mut CudaSlice<i32>) {
///         cond again = 1;
///         spin: while again {
///             // SAFETY: the captured kernel touches only the counter,
///             // through its view, and sets only `again`.
///             step: unsafe capture(stream) |s| {
///                 let step = kernels::CountdownStep::load(s.stream().context())?;
///                 let (handle, mut counter) = (again.raw(), s.write(counter));
///                 let one = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
///                 // SAFETY: countdown_step(unsigned long long handle, int* counter).
///                 unsafe { s.stream().launch_builder(step.function()).arg(&handle).arg(&mut counter).launch(one) }
///                     .map(|_| ())
///                     .map_err(|e| graph_runtime::capture::captured("countdown_step", e))
///             };
///         }
///     }
/// }
/// ```
///
/// # Repeated blocks
///
/// `label: for i in 0..count { ... }` builds its body `count` times, `i`
/// (a `usize`) from 0, in a loop: the expansion and the compile time do not
/// grow with the count, which is any integer expression evaluated when the
/// graph is built (a parameter, a constant, an enclosing block's variable).
/// `i` may appear in the body's operands and launch configurations:
/// `x.slice(i * n..(i + 1) * n)` is iteration `i`'s part of `x`, and a
/// parameter of type `&[CudaSlice<T>]` or `&mut [CudaSlice<T>]` is a list of
/// buffers, `xs[i]` one of them.
///
/// Inside the block, a label names this iteration's node, and `label[i-k]`
/// (with the block's loop variable and a literal `k`) the node `k`
/// iterations earlier: `step[i-1] -> step` chains the iterations (in the
/// first iteration there is no earlier one, and no edge). Outside it, the
/// block's label stands for all its iterations: as an edge's target, every
/// node that starts an iteration; as a source, every node that ends one;
/// with a count of 0, the nodes before the block come before those after
/// it. Blocks nest (lanes of chains); alloc scopes, conditional nodes,
/// captures and `cond` handles in a block are made in every iteration, and
/// a block may sit in a conditional body. Nodes are labelled by their
/// iterations (`step[3][17]` in errors, profiles and `Graph::labels`), and
/// the exec's accessor takes them: `exec.step(3, 17)` (it panics, naming
/// the node, for an iteration the graph does not have).
///
/// What the checks say holds for every count, reasoning on the body once:
/// an edge between iterations goes forward (from the earlier one), so a
/// block never cycles by itself; a label is named in edges of its own
/// block only; an allocation made in a block lives in its iteration (used
/// and freed there, never escaping), and one made outside is not freed in
/// every iteration; a handle drives the conditional node of its own
/// iteration; and two iterations that access one buffer, one writing (or
/// that set one handle), must be ordered by edges between iterations, or
/// marked `#[disjoint(x)]` when each iteration touches its own part: on the
/// block, that says its iterations are disjoint (races within one
/// iteration, and with the nodes around the block, are still checked); on
/// a node, as anywhere, it leaves the node's accesses to `x` out. A handle
/// without a default that only a block sets is an error (a count of 0
/// would leave it unset), and so is an allocation of another graph
/// (`Escaped<T>`) freed in a block.
///
/// ```
/// use graph_runtime::cuda_graph;
/// use graph_runtime::cudarc::driver::CudaSlice;
///
/// cuda_graph! {
///     /// `lanes` lanes, each `length` steps on its 32 elements of `x`.
///     graph Lanes(x: &mut CudaSlice<f32>, lanes: usize, length: usize) {
///         zero: fill x = 0.0f32;
///         // Each lane writes its own part of `x`.
///         #[disjoint(x)]
///         lane: for w in 0..lanes {
///             chain: for i in 0..length {
///                 step: kernel kernels::AddOne<<<1, 32>>>(x.slice(w * 32..(w + 1) * 32), 32u32);
///                 step[i-1] -> step;
///             }
///         }
///         total: kernel kernels::Scale<<<1, 256>>>(x, 2.0f32, (lanes * 32) as u32);
///         zero -> lane -> total;
///     }
/// }
///
/// fn run(ctx: &std::sync::Arc<graph_runtime::cudarc::driver::CudaContext>) -> graph_runtime::Result<()> {
///     let stream = ctx.new_stream().unwrap();
///     let mut x = stream.alloc_zeros::<f32>(8 * 32).unwrap();
///     let graph = Lanes::build(ctx, &mut x, 8, 1000)?; // 8,002 nodes
///     let mut exec = graph.instantiate()?;
///     exec.step(7, 999).set_enabled(false)?; // lane 7's last step
///     exec.launch(&stream)?;
///     exec.synchronize()
/// }
/// ```
///
/// # Fragments
///
/// `fragment name { ... }` (at the top of a graph's body) holds nodes and
/// edges written once; `label: use name;` places a copy of them there, in
/// any block or conditional body, as often as needed: one solver iteration
/// as a straight-line prologue and as a `while` body, say. Each placement
/// is checked where it is placed, like nodes written there; its nodes are
/// named `label.node` (in errors, profiles and `Graph::labels`), and in
/// edges `label` stands for the whole placement, as a repeated block's
/// label does. Unlike a child graph, a fragment's kernels may set the
/// handles of the graph around it, and its buffers are the graph's own.
/// Handles (`cond`) and graph memory are declared in the graph, not in a
/// fragment; fragment nodes have no accessor on the exec.
///
/// ```
/// # use graph_runtime::cuda_graph;
/// # use graph_runtime::cudarc::driver::CudaSlice;
/// cuda_graph! {
///     graph Solve(x: &mut CudaSlice<f32>, counter: &mut CudaSlice<i32>) {
///         cond again = 1;
///         fragment step {
///             sweep: kernel kernels::AddOne<<<1, 32>>>(x, 32u32);
///             test: kernel kernels::CountdownStep<<<1, 1>>>(again, counter);
///             sweep -> test;
///         }
///         first: use step;
///         rest: while again { body: use step; }
///         first -> rest;
///     }
/// }
/// # assert!(Solve::DOT.contains("first.sweep"));
/// ```
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
///   argument, or a capture naming it); a `while` body takes its handle;
///   two setters of one handle are ordered (or in different arms of one
///   conditional); `switch` arms are exactly
///   `0..n`; conditional bodies hold only kernel, empty, copy, fill, child
///   graph and conditional nodes;
/// - a `#[device_launch]` graph holds only kernel, copy, fill and child graph
///   nodes; copies and fills there and in conditional bodies touch only
///   device memory (rustc points at a host operand); attributes apply to the
///   node kinds that support them; programmatic edges join kernel nodes;
/// - kernel arguments match the kernel's declared parameter types, and the
///   kernel after a programmatic edge is declared PDL-aware (rustc points
///   at the edge);
/// - no data races: two nodes that access one buffer (a parameter, an
///   allocation, a `&mut x` operand), one of them writing, are ordered by a
///   path of edges. A fill or a copy's destination writes, a copy's source
///   reads, a kernel argument writes if the kernel's parameter does
///   (`Out<T>`: rustc reports it at the argument). A conditional body's
///   nodes are ordered with the outside through their conditional node;
///   `if`/`else` branches and `switch` arms never run together. Host,
///   child-graph and capture nodes are not looked into. `#[disjoint(x)]` on
///   a node (or a conditional node, for its bodies) leaves its accesses to
///   `x` out (`#[disjoint]`: every buffer), for writes you know are
///   disjoint, such as two halves of one buffer.
///
/// Every error of one invocation is reported, each at the offending tokens.
///
/// # What it generates
///
/// (A node in a repeated block has an accessor that takes its iterations,
/// outermost first: `exec.step(w, i)`.)
///
/// For `graph Name(params) { ... }`: a type `Name<'a>` with `build(&ctx,
/// params)`, `rebuild` (same graph, other arguments, for updates),
/// `instantiate`, the constants `LABELS`, `DOT` and `OPTIONS`; and
/// `NameExec<'a>` with `launch`, `upload`, `update(&Name)` (whole-graph
/// update, identical topology by construction, falling back to
/// re-instantiation) and one accessor per kernel, copy and fill node
/// (`exec.stage1().set_args(..)`, `.set_enabled(false)`). The expression
/// form evaluates to `Result<graph_runtime::Graph, GraphError>`; there,
/// operands written `&x` / `&mut x` are bound.
///
/// Building stops at the first node the driver or the runtime refuses and
/// returns that error, naming the node's label. Kernel nodes record a
/// failure rather than return it (a builder of thousands of kernels then has
/// no error path per node and compiles in near-linear time), so the argument
/// and launch-configuration expressions of the kernel nodes right after a
/// failed one are still evaluated; no node is added after the failure, and
/// no host closure or capture runs.
///
/// # Examples, one per construct
///
/// A named graph type with copy, kernel and host nodes and a chain of edges:
///
/// ```
/// use graph_runtime::cuda_graph;
/// use graph_runtime::cudarc::driver::CudaSlice;
///
/// cuda_graph! {
///     pub graph Reduce(x_h: &[f32], x: &mut CudaSlice<f32>, part: &mut CudaSlice<f64>,
///                      out: &mut CudaSlice<f64>, n: u32, blocks: u32) {
///         load:   copy x_h => x;                                    // memcpy H2D
///         stage1: kernel kernels::ReducePartial<<<blocks, 256>>>(x, part, n);
///         stage2: kernel kernels::ReduceFinal<<<1, 256>>>(part, out, blocks);
///         report: host move || println!("reduced");                 // host node
///         load -> stage1 -> stage2 -> report;
///     }
/// }
/// assert_eq!(Reduce::LABELS, ["load", "stage1", "stage2", "report"]);
/// ```
///
/// The expression form binds the variables it names:
///
/// ```
/// # use graph_runtime::cuda_graph;
/// # use graph_runtime::cudarc::driver::{CudaContext, CudaSlice};
/// fn build(ctx: &std::sync::Arc<CudaContext>, mut x: CudaSlice<f32>) -> graph_runtime::Result<usize> {
///     let graph = cuda_graph! {
///         graph(ctx) {
///             a: kernel kernels::AddOne<<<1, 32>>>(&mut x, 32u32);
///             b: kernel kernels::AddOne<<<1, 32>>>(&mut x, 32u32);
///             a -> b;
///         }
///     }?;
///     Ok(graph.node_count())
/// }
/// ```
///
/// Fan-out and fan-in, memset, empty, child graph, event and capture nodes:
///
/// ```
/// # use graph_runtime::cuda_graph;
/// # use graph_runtime::cudarc::driver::{CudaEvent, CudaSlice, CudaStream};
/// # use std::sync::Arc;
/// cuda_graph! {
///     graph Shapes(x: &mut CudaSlice<f32>, ev: &CudaEvent, stream: &Arc<CudaStream>,
///                  other: graph_runtime::Graph<'a>) {
///         zero:  fill x = 0.0f32;
///         left:  kernel kernels::Scale<<<1, 32>>>(x, 2.0f32, 32u32);
///         // Unordered with `left` on purpose (think: each scales one half).
///         #[disjoint(x)]
///         right: kernel kernels::Scale<<<1, 32>>>(x, 3.0f32, 32u32);
///         join:  empty;
///         sub:   graph other;
///         mark:  record ev;
///         after: wait ev;
///         // SAFETY: the captured work touches no memory.
///         lib:   unsafe capture(stream) |s| { let _ = s; Ok(()) };
///         zero -> [left, right] -> join -> sub -> mark -> after -> lib;
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
///     graph Memory(n: u32) {
///         tmp: alloc f32[n];
///         use_tmp: kernel kernels::Iota<<<1, 32>>>(tmp, n);
///         done: free tmp;
///         #[escape]
///         result: alloc f32[n];
///         alloc scratch: f32[n] {
///             s1: kernel kernels::Add<<<1, 32>>>(scratch, scratch, result, n);
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
/// # use graph_runtime::cudarc::driver::CudaSlice;
/// cuda_graph! {
///     graph Control(visits: &mut CudaSlice<i32>, counter: &mut CudaSlice<i32>, steps: &mut CudaSlice<i32>) {
///         cond go;
///         cond again = 1;
///         cond pick = 0;
///         decide: kernel kernels::SetCondition<<<1, 1>>>(go, 1u32);
///         branch: if go {
///             yes: kernel kernels::Mark<<<1, 1>>>(visits, 0u32);
///         } else {
///             no: empty;
///         }
///         repeat: while again {
///             step: kernel kernels::Countdown<<<1, 1>>>(again, counter, steps);
///         }
///         choose: switch pick {
///             0 => { first: empty; }
///             1 => { second: kernel kernels::Mark<<<1, 1>>>(visits, 1u32); }
///         }
///         decide -> branch -> repeat -> choose;
///     }
/// }
/// # assert!(Control::LABELS.contains(&"step"));
/// ```
///
/// A kernel of one's own sets a handle with `cudaGraphSetConditional(handle,
/// value)`, its parameter declared `graph_runtime::kernel::Cond`
/// (`cudaGraphConditionalHandle` in CUDA C): the runtime prepends both
/// declarations to every CUDA C source; `graph_runtime::kernel::DEVICE_PRELUDE`
/// shows a loop driven by one.
///
/// Attributes, and programmatic dependent launch (PDL) edges between
/// kernels. `-(programmatic)->` lets the next kernel launch once every block
/// of the previous one has called `pdl_trigger()` (or exited);
/// `-(launch_order)->` once every block has started. Either way the next
/// kernel's work before its `pdl_wait()` overlaps the previous kernel, so
/// the kernel after such an edge must be declared PDL-aware
/// (`unsafe pdl_aware cuda_c(..)` in `declare_kernel!`), or the edge is a
/// compile error. `#[launch_order]` (or `#[programmatic]`) on an edge
/// statement gives every `->` in it that kind: a whole chain at once.
///
/// ```
/// # use graph_runtime::cuda_graph;
/// # use graph_runtime::cudarc::driver::CudaSlice;
/// cuda_graph! {
///     #[use_node_priority]
///     graph Tuned(x: &mut CudaSlice<f32>) {
///         #[priority(1)]
///         first: kernel kernels::AddOne<<<1, 32>>>(x, 32u32);
///         #[disabled]
///         second: kernel kernels::PdlAddOne<<<1, 32>>>(x, 32u32);
///         third: kernel kernels::PdlAddOne<<<1, 32>>>(x, 32u32);
///         fourth: kernel kernels::PdlAddOne<<<1, 32>>>(x, 32u32);
///         first -(programmatic)-> second;
///         #[launch_order]
///         second -> third -> fourth;
///     }
///
///     #[device_launch]
///     graph OnDevice(x: &mut CudaSlice<f32>) {
///         step: kernel kernels::AddOne<<<1, 32>>>(x, 32u32);
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
