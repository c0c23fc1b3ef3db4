//! CUDA graphs for Rust: the `cuda_graph!` macro, checked at compile time,
//! and the safe runtime it expands to, over [cudarc]'s driver API.
//!
#![doc = include_str!("../docs/tutorial.md")]
//!
//! # Features
//!
//! cudarc needs a way to find CUDA and a CUDA version. The defaults,
//! `dynamic-loading` and `cuda-12080`, forward to cudarc's features of those
//! names: the crate builds without CUDA installed, and the 12.8 bindings run
//! on CUDA 12.8 and 13 drivers. With `default-features = false` the choice
//! is the user's, on their own cudarc dependency (`dynamic-linking`,
//! `fallback-dynamic-loading`, `cuda-version-from-build-system`, any version
//! from `cuda-12080` to `cuda-13040`). Without `dynamic-loading` the runtime
//! cannot ask cudarc whether libcuda is present: a missing library is then
//! cudarc's panic, not [`GraphError::NoDriver`].
//!
//! ```no_run
//! use graph_runtime::{driver, kernel::{KernelDecl, In, Len, Out}, Graph, LaunchConfig};
//!
//! const SRC: &str = r#"extern "C" __global__ void twice(const float* x, float* y, unsigned n) {
//!     unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
//!     if (i < n) y[i] = 2.0f * x[i];
//! }"#;
//! // SAFETY: the signature matches and the kernel stays within n elements
//! // (a `Len`: the runtime checks it against x's and y's lengths).
//! static TWICE: KernelDecl<(In<f32>, Out<f32>, Len)> = unsafe { KernelDecl::cuda_c(SRC, "twice") };
//!
//! # fn main() -> Result<(), graph_runtime::GraphError> {
//! let ctx = driver::context(0)?;
//! let stream = ctx.default_stream();
//! let x = stream.clone_htod(&[1.0f32, 2.0, 3.0]).unwrap();
//! let mut y = stream.alloc_zeros::<f32>(3).unwrap();
//! let twice = TWICE.load(&ctx)?;
//! {
//!     let mut graph = Graph::new(&ctx)?;
//!     let (xb, yb) = (graph.bind(&x), graph.bind_mut(&mut y));
//!     graph.add_kernel("twice", &twice, LaunchConfig::for_elements(3, 128), (xb, yb, 3), &[])?;
//!     let mut exec = graph.instantiate()?;
//!     exec.launch(&stream)?;
//! }
//! assert_eq!(stream.clone_dtoh(&y).unwrap(), [2.0, 4.0, 6.0]);
//! # Ok(()) }
//! ```
//!
//! # How the crate is organised
//!
//! The runtime is layered like cudarc: [`result`] holds thin `unsafe`
//! wrappers over the `cuGraph*` driver calls; the safe types — [`Graph`],
//! [`Exec`], [`Node`], [`CondHandle`], [`Buf`] — own or borrow what the
//! driver handles refer to, so no safe call can leave an exec pointing at
//! freed memory.
//!
//! Modules import downward only (`tests/module_layers.rs` checks it): the
//! driver layer (`error`, `result`, `driver`, `ids`, and `ranks`, the lock
//! ranks; `copies`, the runtime's own copies on a stream of its own); what
//! a graph holds (`escape`, `fault`, `buffer`, `owned`); kernels and
//! the handles they receive (`kernel`, `handle`); `node`; [`graph`] and the
//! node kinds that extend it ([`conditional`], [`capture`],
//! [`user_object`]); `ordering`, the launch protocol (what a launch checks,
//! waits for, records and releases, in order: its module docs say why);
//! [`exec`]; then [`host`], [`memory`], [`cache`] and [`profile`] (a
//! graph's launch timed per node), which use execs.
//!
//! Minimum driver: CUDA 12.8 (IF/ELSE and SWITCH conditional nodes; an
//! older driver refuses them when they are added, with an error naming the
//! node).
//!
//! # Safety
//!
//! **What the runtime guarantees.** No safe call, whatever else safe code
//! does (`mem::swap`, `mem::forget`, panics, threads, its own trait impls,
//! names the generated code uses), leaves the driver with a reference to
//! freed or foreign memory, or breaks a rule the driver leaves undefined:
//!
//! - *Borrows.* A [`Graph<'a>`](Graph) and its [`Exec<'a>`](Exec)s borrow
//!   every slice, host slice and event their nodes reference for `'a`
//!   (`bind` shared, `bind_mut` exclusive). An exec keeps the stream of its
//!   last launch alive and its drop waits for that launch; a graph that
//!   launches an exec from the device keeps that exec's handle and tracks
//!   its slices. Host memory of copy nodes must be pageable (CUDA is done
//!   with pageable memory once the call that issued the copy returns);
//!   page-locked, registered and managed host memory is refused, and so
//!   is host memory in conditional bodies and device-launched graphs (which
//!   may copy after the launch call returned). Host memory a graph copies
//!   into and reads in host nodes is a graph-owned [`HostBuf`].
//! - *Contexts and streams.* A slice or event of another context is refused
//!   in every node (cudarc could not track it on this context's streams),
//!   and so are a launch on another context's stream and on the per-thread
//!   default stream (another stream on every thread). So are a slice and a
//!   stream of another `CudaContext` value of the graph's context (two
//!   calls of `CudaContext::new` for one device): each value counts its own
//!   streams, and cudarc skips a slice's waits while the slice's value has
//!   none, even for a launch on the other's (make one value per device,
//!   [`driver::context`], and clone the `Arc`; with candle, whose device
//!   holds a value of its own, build graphs with that one,
//!   `device.cuda_stream().context()`; cudarc's own copies across two
//!   values skip their waits the same way). A child graph, an update's
//!   graph and a kernel argument naming a [`DeviceExec`] of another value
//!   are refused too, and so is a kernel loaded in another context (the
//!   driver runs a kernel node in its function's context, whatever the
//!   graph's). A launch or upload on
//!   a capturing stream (cudarc's `begin_capture` is safe) is refused: it
//!   would be recorded, not run. An exec whose drop cannot wait for its
//!   last launch because a capture began on its stream since keeps what
//!   the launch uses, as `mem::forget` of it would (leaked, not freed).
//!   Not closed: another thread that shares the stream and begins a
//!   capture on it while [`Exec::launch`], the exec's drop or a stream
//!   launch ([`Kernel::on`]) runs, between their last check and the work
//!   they queue (a launch, its event records, the frees of what the last
//!   launch left live). This is cudarc's hole
//!   before it is ours: cudarc's own safe calls on a stream that another
//!   thread captures crash the process (tests/cudarc_holes.rs, an
//!   ignored test that uses cudarc alone: SIGSEGV in every run on the
//!   H200). The legacy default stream (`ctx.default_stream()`) counts as
//!   shared with every blocking stream: while one captures (the per-thread
//!   default stream is the one cudarc's safe API makes), the legacy stream
//!   refuses all work, so a capture that another thread begins on the
//!   per-thread stream right after a launch on the legacy stream refuses
//!   that launch's event records, and its host-wait fallbacks (not closed
//!   either: the exec's drop and later cudarc work on its slices may then
//!   follow nothing; launch on `ctx.new_stream()` streams or the exec's
//!   own where other threads capture). **Do not begin captures on a stream that another thread uses**
//!   (capture on a stream of its own, or with the threads' work ordered
//!   around the capture). A launch on the exec's own stream
//!   ([`Exec::launch_on_own_stream`]) leaves other threads no stream to
//!   begin that capture on: no caller gets it (not even through an
//!   [`Escaped`] of its launches, whose stream a stream launch asks for
//!   with a token only the runtime can make). The runtime's waits for its
//!   own events first ask the driver whether the event's last record was
//!   captured (another thread's capture, through the window above) and
//!   refuse instead of waiting; the query may invalidate that capture (a
//!   captured event may not be queried: on the H200 its `end_capture`
//!   then fails with `CUDA_ERROR_STREAM_CAPTURE_INVALIDATED`). An exec's
//!   own stream can still join a capture that another thread began on
//!   *any* stream, through cudarc's waits for a bound slice that thread
//!   last used in it: a launch that waited through cudarc asks its stream
//!   again before `cuGraphLaunch` and refuses a capturing one
//!   ([`StreamRefusal::JoinedCapture`](error::StreamRefusal::JoinedCapture)),
//!   so nothing of the exec is recorded there; the stream stays in that
//!   capture until it ends, and launches and loans there are refused
//!   meanwhile. A loan through another exec that shares the buffers, and
//!   copies on that stream, locks them as the launch does (which then
//!   waits, or is refused while the loan lives); an exec that stops
//!   tracking them (a whole-graph update from a graph of other resources,
//!   or any re-instantiation) leaves its own stream for a new one, so its later waits cannot draw
//!   the old one, where such loans copy, into a capture. (A stream launch binding an
//!   [`Escaped`] does not make the allocation's stream join the launch
//!   stream: the allocation's free waits for its own event.) The
//!   runtime's own copies ([`OwnedMut`], [`Escaped::to_host`],
//!   [`Escaped::write`]) run on a stream of the runtime's own or an
//!   exec's own, which nobody can begin a capture on, and check that it
//!   joined none before they queue anything.
//! - *Bounds.* A kernel's [`kernel::Len`] and [`kernel::Index`] arguments
//!   are checked against its [`kernel::In`]/[`kernel::Out`] buffers, an
//!   [`kernel::OutPerBlock`] buffer against the launch's blocks, and an
//!   [`kernel::InFirst`]/[`kernel::OutFirst`] buffer against its `N`, at
//!   every path that sets arguments: a declaration can vouch for bounds that
//!   safe callers cannot move.
//! - *Between launches.* A slice bound with `bind_mut` is reachable through
//!   [`Exec::bound_mut`] as cudarc views (never as `&mut CudaSlice`, which
//!   `mem::swap` could replace under the graph's nodes); the view borrows
//!   the exec, so it cannot launch meanwhile, and lends the graph's
//!   bindings out: a launch of another exec that shares them (a clone's, a
//!   parent graph's) is refused ([`GraphError::BufferLent`]) until it is
//!   dropped.
//! - *cudarc's event tracking.* Every launch waits for pending cudarc work
//!   on the bound slices (its own, its child graphs', its device-launched
//!   execs') and records itself as their latest use, so cudarc work on any
//!   stream, a slice's free included, is ordered after it. A launch that
//!   follows the last one on the same stream skips the waits of slices
//!   nothing else reached since (only `bound_mut` can), never the record.
//!   cudarc's own waits, records and synchronizes return an error stored
//!   in the context (by `record_err`, which safe code and any failed cudarc
//!   drop reach) instead of doing their work: the runtime makes the waits
//!   and records it relies on with the driver directly (an exec's drop and
//!   `synchronize`, the records after a launch, [`Escaped`]'s ordering),
//!   and does not launch when an error was stored while cudarc made a
//!   slice's waits. An [`Escaped`]'s uses (its copies and stream
//!   launches) are recorded by the runtime itself, and one dropped while
//!   an error is stored still waits for its whole context before its
//!   free. Not closed, for cudarc slices bound to graphs or to stream
//!   launches: a third thread
//!   that takes that error back (any cudarc call) between the skipped wait
//!   and the launch's check (the waits are cudarc's: a slice's events are
//!   private to cudarc); cudarc's own safe copies have the same weakness.
//!   Nor, for the same reason, a slice whose last use another thread
//!   recorded into a capture that ends between cudarc's wait (which then
//!   joined it) and the launch's second capture check: the wait ordered
//!   the launch after nothing that runs. (For that record to be made,
//!   cudarc's wait before it, for work outside the capture, must have
//!   been refused and its stored error taken back: the hole above.)
//!   Not closed either, and cudarc's before it is ours: cudarc keeps one
//!   read event per slice, and a read on another stream (a launch of
//!   another exec that binds the slice, or a cudarc copy from it) records
//!   over it without waiting for it, so a slice's free follows only the
//!   last read. Two cudarc reads on two streams before a free expose the
//!   first (tests/cudarc_holes.rs reproduces it with cudarc alone, in
//!   every run on the H200); so does
//!   an exec that was `mem::forget`-ed after a launch that reads a slice
//!   bound with `bind`, and, while an error is stored in the context
//!   (cudarc's waits then skip themselves), one forgotten after a launch
//!   that writes a slice bound with `bind_mut`; and an exec forgotten while
//!   a launch that uses a borrowed event (record and wait nodes) or host
//!   memory (copies) is pending, whose borrows end then too. An exec that
//!   is dropped waits for its launch (through an event of its own, when its
//!   stream began a capture since), so only a forgotten one is exposed. (Making each launch's home streams
//!   wait for it would close it for graphs, at the price of tying every
//!   read-only slice's stream to every launch that reads it, and of a
//!   deadlock for a host node that waits on that stream: not done.)
//!   Two launches from the device of one exec that nothing orders (two
//!   launcher kernels in parallel nodes, or launcher graphs on two streams,
//!   naming one [`DeviceExec`]) do not run at once: the driver refuses the
//!   second (its device-side `cudaGraphLaunch` returns
//!   `cudaErrorInvalidValue` to the launching kernel, and the exec runs
//!   once; scripts/sanitizer-repro/twin_device_launch.cu, measured on the
//!   H200). A launch from the host is waited for before a device handle is
//!   handed out.
//! - *Allocations that outlive their launch.* [`Exec::take_escaped`] hands
//!   one out as an owned [`Escaped`]; every launch that makes, uses or
//!   frees it, every copy of it (made by the runtime, on a stream of its
//!   own: an `Escaped` is not a cudarc `DevicePtr`, so no caller code runs
//!   between the checks and the copy) and its free on drop wait for the
//!   operation before through one event, and launches out of turn (making
//!   it while it is live and taken, using or freeing it once freed, freeing
//!   it while the caller still holds an `Escaped` of it) are refused. A
//!   graph binding one is neither a child graph nor launched from the
//!   device (those launches could not be ordered). A shared use (a read,
//!   which may overlap another) waits for its work instead of recording
//!   it; a use on a capturing stream is refused, before anything is
//!   queued (checked again after the waits for the launch's other
//!   buffers). A copy or a shared use that cannot be waited for, or a
//!   last use whose record failed or was captured, leaves it stuck:
//!   never freed, never used or made again (a stored error is no guard:
//!   anyone may take it back).
//! - *Graph-owned buffers* ([`Graph::add_buffer`], `buffer name: T[len];`).
//!   Reached only through the graph's nodes and, between launches, through
//!   a loan ([`Exec::buffer`]) whose copies the runtime makes itself (no
//!   caller code between its checks and the work it queues) and waits for.
//!   Every use (a launch, a new buffer, the free) is ordered after the one
//!   before by the stream of that use, which the graph keeps alive and
//!   records on when the next use comes: no step relies on a record made
//!   after a use (cudarc's guards skip theirs while an error is stored).
//!   After a launch on an exec's own stream
//!   ([`Exec::launch_on_own_stream`]), a loan copies on that stream with
//!   no event, through that exec or another that shares the buffers (a
//!   clone's): no caller gets the stream, so only the runtime queues work
//!   there and nobody can begin a capture on it. It can only join one
//!   through that exec's launch waits there, which lock the buffers first
//!   (refused while they are lent) and after which the launch asks the
//!   driver again: a loan copies there without asking once a launch was
//!   queued after that check, and asks otherwise (a capturing stream is
//!   then refused, and the buffers stay lent out for good, never freed).
//!   Other execs' launches are refused while a loan lives. The buffers are
//!   freed after their last use when the last graph, clone and exec
//!   holding them is gone; a forgotten exec leaks them.
//! - *Updates.* The resources a whole-graph update replaces (their kernels'
//!   modules) are kept until the exec's stream is seen done.
//! - *Plain data.* Element types of graph allocations, copies and fills are
//!   [`bytemuck::Pod`]: a copy cannot forge an owning pointer or an invalid
//!   value. The traits that say which bytes a node writes or which buffers a
//!   kernel touches ([`memory::FillValue`], [`memory::CopySource`],
//!   [`memory::CopyDestination`], [`kernel::KernelArgs`]) are sealed, and
//!   [`kernel::KernelParam`] is `unsafe` to implement.
//! - *Graph memory.* Every path that puts a buffer into a node (building,
//!   [`Exec::set_kernel_args`] and the typed accessors, rebuilds, whole-graph
//!   updates) checks the same rules: a graph allocation is used only by
//!   nodes ordered after its alloc node and before its free node; a
//!   read-only binding is never written; a buffer belongs to this graph. An
//!   allocation's identity is unique across graphs, also graphs that share
//!   bound slices. An exec with memory nodes is never updated from another
//!   graph (its allocations would keep this graph's addresses).
//! - *Conditional handles.* A kernel sets only handles of its own graph, two
//!   kernels that set one handle are ordered (or in different arms of one
//!   conditional node), and so are a setter and the conditional node that
//!   reads the handle; an exec's argument update keeps each kernel's
//!   handles. A graph that made a handle is refused as a child graph: the
//!   parent would not see its setters, and the driver copies the child,
//!   so two copies would set one handle unordered.
//! - *Driver threads.* No CUDA call is made on the driver's callback thread:
//!   host-node closures run on a runtime-owned thread while the callback
//!   waits, and values kept by user objects are dropped on another.
//! - *Threads.* Graphs and execs are `Send`, not `Sync`. Once a graph has an
//!   exec, the graph's driver calls and the exec's per-node calls on its
//!   node handles are serialized by a lock. The runtime's locks have ranks,
//!   declared in one place (the `ranks` module; debug builds check every
//!   acquisition), and none is held while user code runs: two threads'
//!   launches, updates and drops cannot wait for each other. A conditional body replaced
//!   while it is built (`mem::swap` on the `&mut Graph` the builder gets)
//!   poisons the graph: every later call returns [`GraphError::Poisoned`].
//! - *Unwinding.* A panic in a body builder hands the records back; a panic
//!   in captured work ends the capture; a panic in a host-node closure never
//!   unwinds into the driver: it is caught, and the next launch or
//!   [`Exec::synchronize`] returns [`GraphError::HostPanicked`] naming the node.
//! - *Faults.* A kernel that traps or faults makes its context unusable (a
//!   CUDA rule): the next synchronize returns the driver's error, without a
//!   label (the driver does not say which node), and every later call in
//!   that context fails with a typed error; nothing panics or hangs.
//!
//! **What `unsafe` entry points make the caller promise.**
//!
//! - [`KernelDecl::cuda_c`], [`KernelDecl::ptx`], [`KernelDecl::cubin`],
//!   [`Kernel::from_function`] and `unsafe` in [`declare_kernel!`]: the
//!   kernel takes parameters matching the declared tuple in order and
//!   layout, and touches only memory it is given, within bounds that safe
//!   callers cannot push past the buffers' lengths: a count it trusts is a
//!   [`kernel::Len`], an index an [`kernel::Index`], a fixed-size or
//!   per-block buffer an [`kernel::InFirst`]/[`kernel::OutFirst`]/
//!   [`kernel::OutPerBlock`] (all checked by the runtime), and anything else
//!   (the block size, say) the kernel checks itself.
//! - [`KernelDecl::pdl_aware`], [`Kernel::assume_pdl_aware`]: every thread
//!   waits on its predecessors (`griddepcontrol.wait`) before touching their
//!   memory.
//! - [`Graph::add_capture`]: the memory the captured work touches other
//!   than through the [`capture::Capture`]'s views of the graph's buffers
//!   stays valid while the graph or any exec of it may run; the views
//!   serve only work issued on the capture stream or streams forked from
//!   it ([`capture::Capture::fork`]), and a forked stream is used by
//!   nothing else until the work returns.
//! - `unsafe impl` [`kernel::KernelParam`]: encode exactly one parameter and
//!   report every buffer, handle and exec it passes (delegate to the
//!   runtime's impls).
//! - `ctx.disable_event_tracking()` (cudarc): with tracking off, ordering
//!   cudarc work on other streams with the graph's launches is the caller's.
//!
//! **Driver rules relied on** (CUDA Programming Guide 4.2 and the driver
//! API reference): graph and exec objects are not internally synchronized;
//! a graph with memory nodes has at most one live exec; launches of one exec
//! are ordered; an exec's destruction is deferred until its launches
//! complete; a graph allocation's address is fixed at its alloc node; host
//! functions and user-object destructors must not call CUDA; pageable host
//! memory is no longer accessed once the call that issued its transfer
//! returns (staged for host-to-device copies, complete for device-to-host).
//!
//! [cudarc]: https://docs.rs/cudarc
// Every fallible public function says how it fails (`# Errors`).
#![warn(clippy::missing_errors_doc)]

pub mod buffer;
pub mod cache;
pub mod capture;
pub mod conditional;
mod copies;
pub mod driver;
pub mod error;
pub mod escape;
pub mod exec;
mod fault;
pub mod graph;
mod handle;
pub mod host;
mod ids;
pub mod kernel;
pub mod memory;
pub mod node;
mod ordering;
mod owned;
pub mod profile;
mod ranks;
#[doc(hidden)]
pub mod repeat;
pub mod result;
pub mod user_object;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

#[doc(hidden)]
#[path = "doc_kernels.rs"]
pub mod __doc_kernels;

pub use buffer::{BoundMut, Buf};
pub use cache::{CacheOutcome, GraphCache};
pub use conditional::CondHandle;
pub use error::{GraphError, Result};
pub use escape::Escaped;
pub use exec::{
    DeviceExec, Exec, InstantiateOptions, KernelNodeMut, KernelNodeMutOf, NodeMut, UpdateOutcome,
};
pub use graph::Graph;
pub use host::HostBuf;
pub use kernel::{Kernel, KernelDecl, KernelDef, LaunchConfig};
pub use memory::OwnedMut;
pub use node::{EdgeKind, KernelNode, Node, NodeKind};
pub use profile::{NodeTime, Profile};

/// bytemuck, re-exported: element types of graph memory, copies and fills
/// are [`bytemuck::Pod`] (derive it for your own `#[repr(C)]` types).
pub use bytemuck;
/// cudarc, re-exported so users and generated code name one version.
pub use cudarc;

#[doc = include_str!("../docs/cuda_graph.md")]
pub use graph_macros::cuda_graph;

#[doc = include_str!("../docs/errors.md")]
pub mod compile_errors {}
