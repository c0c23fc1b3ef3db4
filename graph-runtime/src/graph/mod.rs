//! `Graph`: builds a CUDA graph node by node through the polymorphic
//! `cuGraphAddNode`. Every node has a label, so driver errors name it.
//!
//! Safety model: a `Graph<'a>` borrows everything its nodes reference for
//! `'a` — bound slices, host slices, events, execs launched from the device —
//! and its execs carry the same `'a`, so no safe call can leave an exec
//! referring to freed memory. Graph allocations are checked as nodes are
//! added: every use is ordered after the alloc node and before the free node.
//!
//! Thread safety: graphs are `Send` but not `Sync`. NVIDIA: "Graph objects
//! (cudaGraph_t, CUgraph) are not internally synchronized and must not be
//! accessed concurrently from multiple threads."

use crate::buffer::{
    lock, Binding, Buf, BufferUse, DeviceTarget, Resources, SharedResources, UseEvent,
};
use crate::error::{
    ArgumentRefusal, DriverResultExt, Foreign, GraphError, OrderRule, Result, Unsupported,
};
use crate::fault::HostFaults;
use crate::kernel::{ArgEncoder, Kernel, KernelArgs, LaunchConfig};
use crate::node::{EdgeKind, KernelNode, Node, NodeInfo, NodeKind};
use crate::ranks::{self, Rank, Ranked};
use crate::repeat::NodeLabel;
use crate::result;
use cudarc::driver::sys::{self, CUgraph};
use cudarc::driver::{CudaContext, CudaEvent, CudaSlice};
use std::borrow::Cow;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

mod ancestry;
mod built_uses;
mod disjoint;
mod kernel_node;
pub(crate) use kernel_node::{foreign_device_exec, keep_device_targets};
mod operand;
mod raw;
mod registry;
mod shared_registry;
mod spare_records;
mod structure;

pub use operand::Operand;

pub(crate) use kernel_node::with_kernel_params;
pub(crate) use raw::RawGraph;
pub(crate) use registry::{AllocInfo, AllocOrigin, HostMemory, HostNodeMaker, Place, Registry};
pub(crate) use shared_registry::SharedRegistry;

pub(crate) use crate::ids::{next_id, FOREIGN_ROOT};

/// A CUDA graph under construction (or a conditional body of one).
///
/// # Errors
///
/// Every node-adding method (`add_*`) checks the node before the driver
/// sees it, and its error names the node's label:
/// [`GraphError::ForeignHandle`] for a dependency or buffer of another
/// graph; [`GraphError::Unsupported`] for a dependency in another graph
/// level (a conditional body is a graph of its own);
/// [`GraphError::ReadOnlyWrite`] for a write to a buffer bound read-only;
/// [`GraphError::Unordered`] for a graph allocation used where it is not
/// live (not ordered after its alloc node, or after its free); [`GraphError::Poisoned`]
/// once a conditional body was replaced while built; [`GraphError::Driver`]
/// when the driver refuses the node.
pub struct Graph<'a> {
    /// This level's graph: the root graph or a conditional body.
    pub(crate) raw: CUgraph,
    /// The owned root graph (for a body: its root's).
    pub(crate) owner: Arc<RawGraph>,
    /// Identity of this graph instance, for node handles.
    pub(crate) instance: u64,
    /// Identity of this level.
    pub(crate) level: u64,
    /// For a body: the root-level node that holds it.
    pub(crate) top_node: Option<u32>,
    /// For a body: the conditional node that holds it (one level up).
    pub(crate) holder: Option<u32>,
    /// Identity of the resources (bound buffers), shared with clones.
    pub(crate) resource_id: u64,
    pub(crate) ctx: Arc<CudaContext>,
    /// Node records. A conditional body takes its root's registry while it
    /// is being built (see `conditional`), so that one graph family has one
    /// registry and no lock is needed per node; execs keep a snapshot.
    pub(crate) registry: SharedRegistry,
    pub(crate) resources: SharedResources<'a>,
    /// The function of the last kernel node added here, already kept alive
    /// in `resources` (saves a lock per node in runs of one kernel).
    pub(crate) last_function: sys::CUfunction,
    pub(crate) _borrows: PhantomData<&'a mut ()>,
}

// SAFETY: see the module docs — a Graph is used by one thread at a time
// (`&mut self` for every change, and Graph is not Sync); the CUDA handles it
// holds have no thread affinity; the borrowed slices are Sync (shared) or
// Send (exclusive).
unsafe impl Send for Graph<'_> {}

impl std::fmt::Debug for Graph<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("Graph");
        out.field("instance", &self.instance)
            .field("nodes", &self.registry().nodes.len());
        // What the graph keeps alive, shared with its execs and the graphs
        // made with `new_sharing`. Without waiting: a launch holds the set
        // while it queues, and a host node's closure that logs the graph
        // must not wait for a launch that may wait for it.
        let resources = match self.resources.try_lock() {
            Ok(resources) => Some(resources),
            Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        };
        if let Some(resources) = resources {
            out.field("bindings", &resources.bindings.len())
                .field("kernels", &resources.functions.len())
                .field("device_targets", &resources.device_targets.len());
        }
        out.finish()
    }
}

impl<'a> Graph<'a> {
    /// An empty graph in `ctx`.
    ///
    /// # Errors
    /// [`GraphError::NoDriver`] without a CUDA driver;
    /// [`GraphError::Driver`] when the driver cannot make the
    /// graph.
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        crate::driver::require_driver()?;
        let raw = create_graph(ctx)?;
        Ok(Graph::root(
            raw,
            ctx,
            next_id(),
            Arc::default(),
            SharedRegistry::with_spare_records(),
        ))
    }

    /// A root graph around an owned `raw` graph.
    fn root(
        raw: CUgraph,
        ctx: &Arc<CudaContext>,
        resource_id: u64,
        resources: SharedResources<'a>,
        registry: SharedRegistry,
    ) -> Self {
        let instance = next_id();
        Graph {
            raw,
            owner: Arc::new(RawGraph::new(raw, ctx)),
            instance,
            level: instance,
            top_node: None,
            holder: None,
            resource_id,
            ctx: ctx.clone(),
            registry,
            resources,
            last_function: std::ptr::null_mut(),
            _borrows: PhantomData,
        }
    }

    /// The context the graph belongs to.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The raw handle of this graph level, for calls the runtime does not wrap.
    pub fn cu_graph(&self) -> CUgraph {
        self.raw
    }

    /// Number of nodes added so far (bodies included).
    pub fn node_count(&self) -> usize {
        self.registry().nodes.len()
    }

    /// The label of a node of this graph.
    pub fn label(&self, node: Node) -> Option<String> {
        let registry = self.registry();
        let index = node.index as usize;
        (node.graph == self.instance && index < registry.nodes.len())
            .then(|| registry.label(index).to_string())
    }

    /// The device address of the graph allocation its alloc node
    /// `label` makes (a DSL `alloc` statement's name; `None` if no alloc
    /// node has that label). Graph allocations keep their address for the
    /// graph's life and every launch of its execs, and the driver may give
    /// two allocations whose lifetimes do not overlap the same address:
    /// compare them to see it. The address is a number, not a buffer:
    /// nothing can be read or written through it without `unsafe`.
    pub fn allocation_address(&self, label: &str) -> Option<u64> {
        self.registry().allocation_address(label)
    }

    /// The labels of all nodes, in the order they were added.
    pub fn labels(&self) -> Vec<String> {
        self.registry().labels()
    }

    /// Makes room for `nodes` more node records, so that a build of known
    /// size does not grow them as it goes (generated builders call it with
    /// their node count). A hint: more nodes than reserved still fit.
    pub fn reserve(&mut self, nodes: usize) {
        self.registry.reserve(nodes);
    }

    /// What a repeated block of a generated builder calls before its
    /// loop: refuses, naming the block, the `nodes` its iterations add
    /// when they pass the most a graph holds (`0..u32::MAX` iterations of
    /// two nodes fail at once, not once memory runs out), and makes room
    /// for `guess` nodes (with the blocks around it: that each of their
    /// iterations repeats this one's count; a hint, never refused).
    ///
    /// # Errors
    /// [`GraphError::InvalidArguments`] naming `block`.
    #[doc(hidden)]
    pub fn __reserve_repeated(&mut self, block: &str, nodes: usize, guess: usize) -> Result<()> {
        let most = crate::node::MAX_NODES;
        if nodes > most - self.node_count().min(most) {
            return Err(GraphError::arguments(
                block,
                ArgumentRefusal::IterationsPastMostNodes { nodes, most },
            ));
        }
        self.reserve(guess);
        Ok(())
    }

    /// See `built_uses`: the macro marks the graphs it builds.
    pub(crate) fn mark_race_checked(&mut self) {
        self.registry.built_uses.mark_checked();
    }

    pub(crate) fn registry(&self) -> &Registry {
        &self.registry
    }

    pub(crate) fn is_body(&self) -> bool {
        self.top_node.is_some()
    }

    /// Binds a slice the graph only reads. It stays borrowed while the graph
    /// or any of its execs lives.
    ///
    /// A slice of another context, or of another `CudaContext` value of
    /// this one (make one value per device and clone the `Arc`), gives a
    /// buffer every node refuses (its uses could not be tracked: cudarc
    /// records events only on streams of the slice's own context, and
    /// waits for them only while the slice's own value has streams).
    #[must_use = "the graph uses the slice only through the returned `Buf`"]
    pub fn bind<T>(&mut self, slice: &'a CudaSlice<T>) -> Buf<'a, T> {
        // Tracking happens at every launch, not at build time.
        let ptr = crate::buffer::untracked_address(slice);
        if !self.same_context(slice.context()) {
            return Buf::new(ptr, slice.len(), false, FOREIGN_ROOT, None);
        }
        let event = UseEvent::read_of(slice);
        lock(&self.resources)
            .bindings
            .push(Binding::Read(slice, event));
        Buf::new(ptr, slice.len(), false, self.resource_id, None)
    }

    /// Whether `ctx` is the graph's context value (`Arc::ptr_eq`): two
    /// `CudaContext` values of one context (two `CudaContext::new` calls)
    /// count their streams apart, and cudarc then skips a slice's waits
    /// for a launch on the other value's stream.
    pub(crate) fn same_context(&self, ctx: &Arc<CudaContext>) -> bool {
        Arc::ptr_eq(ctx, &self.ctx)
    }

    /// Binds a slice the graph writes (and may read). It stays exclusively
    /// borrowed while the graph or any of its execs lives.
    ///
    /// A slice of another context gives a buffer every node refuses, as
    /// for [`Graph::bind`].
    #[must_use = "the graph uses the slice only through the returned `Buf`"]
    pub fn bind_mut<T: 'static>(&mut self, slice: &'a mut CudaSlice<T>) -> Buf<'a, T> {
        let ptr = crate::buffer::untracked_address(&*slice);
        let len = slice.len();
        if !self.same_context(slice.context()) {
            return Buf::new(ptr, len, true, FOREIGN_ROOT, None);
        }
        let event = UseEvent::write_of(slice);
        lock(&self.resources)
            .bindings
            .push(Binding::Write(ptr, slice, event));
        Buf::new(ptr, len, true, self.resource_id, None)
    }

    /// Checks dependencies and buffer uses, adds the node, records it.
    #[inline(never)]
    pub(crate) fn add_raw(
        &mut self,
        label: NodeLabel<'_>,
        kind: NodeKind,
        deps: &[Node],
        edges: Option<&[EdgeKind]>,
        uses: &[BufferUse],
        params: result::NodeParams<'_>,
    ) -> Result<Node> {
        let _entered = self.owner.enter()?;
        if !self.registry.has_room(label, deps.len()) {
            return Err(graph_full(label));
        }
        // Checked and their handles gathered in one pass. Few nodes have
        // more than a handful of dependencies: keep their handles and edge
        // data on the stack. (Against `Vec`s: 3-6% of build + instantiate
        // on four shapes, BENCHMARKS.md runs 22-23.)
        const INLINE: usize = 8;
        let mut inline_deps = [std::ptr::null_mut(); INLINE];
        for (i, dep) in deps.iter().enumerate() {
            let raw = self.checked_dep(label, dep)?;
            if let Some(slot) = inline_deps.get_mut(i) {
                *slot = raw;
            }
        }
        let allocs_before = self.check_uses(label, deps, uses)?;
        // (One more for an alloc node's own allocation.)
        if !self.registry.has_room_for_allocs(allocs_before.len() + 1) {
            return Err(graph_full(label));
        }
        if edges.is_some_and(|kinds| kinds.len() != deps.len()) {
            return Err(GraphError::arguments(
                &label.to_string(),
                ArgumentRefusal::EdgeKinds {
                    kinds: edges.map_or(0, <[EdgeKind]>::len),
                    dependencies: deps.len(),
                },
            ));
        }
        let registry = &self.registry;
        // Made only for nodes with edge kinds (most have none).
        let mut inline_edges;
        let (heap_deps, heap_edges): (Vec<sys::CUgraphNode>, Vec<sys::CUgraphEdgeData>);
        let raw_deps: &[sys::CUgraphNode] = if deps.len() <= INLINE {
            &inline_deps[..deps.len()]
        } else {
            heap_deps = deps
                .iter()
                .map(|dep| registry.nodes[dep.index as usize].raw)
                .collect();
            &heap_deps
        };
        let edge_data: Option<&[sys::CUgraphEdgeData]> = match edges {
            None => None,
            Some(kinds) if kinds.len() <= INLINE => {
                inline_edges = [EdgeKind::Full.edge_data(); INLINE];
                for (slot, kind) in inline_edges.iter_mut().zip(kinds) {
                    *slot = kind.edge_data();
                }
                Some(&inline_edges[..kinds.len()])
            }
            Some(kinds) => {
                heap_edges = kinds.iter().map(|k| k.edge_data()).collect();
                Some(&heap_edges)
            }
        };
        // Every node is added with the graph's context current. (Kernel
        // nodes once skipped this, 20-40 ns of a 300 ns add, relying on the
        // driver to report a missing context; on a thread that never had
        // one, cuGraphAddNode crashed instead.)
        // (Errors spell the label only when they happen.)
        let at = |e: cudarc::driver::DriverError, operation| {
            GraphError::driver(operation, e.0, Some(&label.to_string()))
        };
        // Not cudarc's `bind_to_thread`: its `check_err` takes the error a
        // failed cudarc call stored (an atomic swap, about 20 cycles of a
        // node's add) to return it from a call that did not fail; it stays
        // stored for cudarc's next call to report.
        result::bind(&self.ctx).map_err(|e| at(e, "cuCtxSetCurrent"))?;
        // SAFETY: the graph and its dependencies are live (owned by self);
        // params were fully initialised by the caller for `kind`; edge data
        // has one entry per dependency (checked above); a context is current.
        let added = unsafe { result::add_node(self.raw, raw_deps, edge_data, params) };
        let raw = added.map_err(|e| at(e, "cuGraphAddNode"))?;
        let registry = &mut *self.registry;
        let index = registry.nodes.len() as u32;
        let user = self.top_node.unwrap_or(index);
        for u in uses {
            if let Some(alloc) = u.alloc {
                let users = &mut registry.allocs[alloc.index as usize].users;
                if users.last() != Some(&user) {
                    users.push(user);
                }
            }
        }
        let place = Place {
            level: self.level,
            top: self.top_node,
            holder: self.holder,
        };
        registry.push_node(label, (raw, kind), place, deps, &allocs_before);
        // Under the one `&mut` of the registry a node takes. (Every kind:
        // a `#[disjoint]` block's check reads copies' and fills' too.)
        registry.built_uses.record(index, uses);
        if let Some(kinds) = edges {
            registry.note_edge_kinds(index, kinds);
        }
        Ok(Node {
            graph: self.instance,
            level: self.level,
            index,
        })
    }

    /// A dependency's driver handle, if it is a node of this graph level.
    #[inline]
    fn checked_dep(&self, label: NodeLabel<'_>, dep: &Node) -> Result<sys::CUgraphNode> {
        match self.registry.nodes.get(dep.index as usize) {
            Some(info) if dep.graph == self.instance && dep.level == self.level => Ok(info.raw),
            _ => Err(self.dep_refusal(label, dep)),
        }
    }

    #[cold]
    fn dep_refusal(&self, label: NodeLabel<'_>, dep: &Node) -> GraphError {
        if dep.graph != self.instance || dep.index as usize >= self.registry.nodes.len() {
            return GraphError::foreign(
                Foreign::Dependency,
                Some(&label.to_string()),
                "add a node",
            );
        }
        let dependency = self.registry.label(dep.index as usize).to_string();
        GraphError::unsupported(
            "add a node",
            Some(&label.to_string()),
            Unsupported::DependencyInOtherLevel { dependency },
        )
    }

    /// Buffer uses must be of this graph; a graph allocation must be ordered
    /// after its alloc node and not yet freed. Returns the new node's
    /// `allocs_before`.
    fn check_uses(
        &self,
        label: NodeLabel<'_>,
        deps: &[Node],
        uses: &[BufferUse],
    ) -> Result<Vec<u32>> {
        let registry = &self.registry;
        // (Parts sliced past their buffer's end were refused by the
        // callers, before their lengths: here their root is foreign.)
        for u in uses {
            if u.root != self.resource_id {
                return Err(GraphError::foreign(
                    Foreign::Buffer,
                    Some(&label.to_string()),
                    "add a node",
                ));
            }
            if u.write && !u.writable {
                return Err(GraphError::ReadOnlyWrite {
                    label: label.to_string(),
                });
            }
        }
        let unknown =
            || GraphError::foreign(Foreign::Allocation, Some(&label.to_string()), "add a node");
        // A graph without allocations (most graphs) has nothing to order.
        if registry.allocs.is_empty() {
            return match uses.iter().any(|u| u.alloc.is_some()) {
                true => Err(unknown()),
                false => Ok(Vec::new()),
            };
        }
        let mut before: Vec<u32> = Vec::new();
        for dep in deps {
            before.extend_from_slice(registry.allocs_before(dep.index as usize));
        }
        before.sort_unstable();
        before.dedup();
        // A body's uses are ordered through its top-level node.
        let ordered: &[u32] = match self.top_node {
            Some(top) => registry.allocs_before(top as usize),
            None => &before,
        };
        for alloc in uses.iter().filter_map(|u| u.alloc) {
            if alloc.graph != self.instance {
                return Err(unknown());
            }
            let alloc = alloc.index;
            let info = registry.allocs.get(alloc as usize).ok_or_else(unknown)?;
            let alloc_label = registry.alloc_label(info);
            if let Some(free) = info.freed_by {
                return Err(GraphError::unordered(
                    &label.to_string(),
                    OrderRule::UseAfterFree {
                        allocation: alloc_label.to_string(),
                        free: registry.label(free as usize).to_string(),
                    },
                ));
            }
            if info.node().is_some() && ordered.binary_search(&alloc).is_err() {
                return Err(GraphError::unordered(
                    &label.to_string(),
                    OrderRule::UseBeforeAlloc {
                        allocation: alloc_label.to_string(),
                    },
                ));
            }
        }
        Ok(before)
    }
}

/// A new, empty `CUgraph` in `ctx` (owned by the caller).
pub(crate) fn create_graph(ctx: &Arc<CudaContext>) -> Result<CUgraph> {
    // (Not cudarc's `bind_to_thread`, whose atomic swap takes an error a
    // failed cudarc call stored: it stays for cudarc's next call, as in
    // `add_raw`.)
    result::bind(ctx).op("cuCtxSetCurrent")?;
    // SAFETY: the context is current.
    unsafe { result::graph_create() }.op("cuGraphCreate")
}

/// Node parameters of `type_` with every other byte zero (valid for the
/// driver: CUgraphNodeParams may start zeroed).
pub(crate) fn zeroed_params(type_: sys::CUgraphNodeType) -> sys::CUgraphNodeParams {
    // SAFETY: CUgraphNodeParams is plain data for which all-zero is valid.
    let mut params: sys::CUgraphNodeParams = unsafe { std::mem::zeroed() };
    params.type_ = type_;
    params
}

/// A node past what a graph's records hold.
#[cold]
fn graph_full(label: NodeLabel<'_>) -> GraphError {
    GraphError::unsupported(
        "add a node",
        Some(&label.to_string()),
        Unsupported::GraphFull {
            most: crate::node::MAX_NODES,
        },
    )
}
