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

use crate::buffer::{lock, Binding, Buf, BufferUse, SharedResources, UseEvent};
use crate::conditional::CondHandle;
use crate::error::{DriverResultExt, GraphError, Result};
use crate::kernel::{ArgEncoder, Kernel, KernelArgs, LaunchConfig, MAX_PARAMS};
use crate::node::{EdgeKind, KernelNode, Node, NodeInfo, NodeKind};
use crate::result;
use crate::user_object::HostFaults;
use cudarc::driver::sys::{self, CUgraph};
use cudarc::driver::{CudaContext, CudaEvent, CudaSlice};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The resource id of no graph (ids start at 1): a buffer bound from
/// another context carries it, so every node refuses it.
pub(crate) const FOREIGN_ROOT: u64 = 0;

pub(crate) fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// An owned `CUgraph`, destroyed on drop. Shared by a graph, its
/// conditional bodies and its execs, so that node handles stay valid for
/// per-node exec updates.
///
/// NVIDIA: "Graph objects (cudaGraph_t, CUgraph) are not internally
/// synchronized and must not be accessed concurrently from multiple
/// threads." A `Graph` and its `Exec`s are each `Send`, and an exec's
/// per-node calls pass the graph's node handles to the driver; so once an
/// exec exists, every driver call on the graph or its node handles holds
/// `guard`. Before that, `&mut Graph` alone reaches the graph.
#[derive(Debug)]
pub(crate) struct RawGraph {
    pub raw: CUgraph,
    pub ctx: Arc<CudaContext>,
    guard: Mutex<()>,
    /// Set when the first exec is made: from then on `guard` is taken.
    has_execs: AtomicBool,
    /// Set when a conditional body was replaced while it was built
    /// (`mem::swap` through the `&mut Graph` a body builder gets): the
    /// graph's records are lost, so every later call is refused.
    poisoned: AtomicBool,
}

// SAFETY: the handle is destroyed only once (in Drop); every other driver
// call on it goes through `Graph` (`&mut self` to change it, not Sync) or an
// `Exec`, serialized by `guard` once an exec exists (see above).
unsafe impl Send for RawGraph {}
// SAFETY: as above: shared references reach the driver only under `guard`
// once execs exist; before that no exec shares the graph.
unsafe impl Sync for RawGraph {}

impl RawGraph {
    pub fn new(raw: CUgraph, ctx: &Arc<CudaContext>) -> Self {
        RawGraph {
            raw,
            ctx: ctx.clone(),
            guard: Mutex::new(()),
            has_execs: AtomicBool::new(false),
            poisoned: AtomicBool::new(false),
        }
    }

    /// Enters the graph for a driver call: refused if it is poisoned; holds
    /// the guard while execs share it.
    #[inline]
    pub fn enter(&self) -> Result<Option<MutexGuard<'_, ()>>> {
        if self.poisoned.load(Ordering::Acquire) {
            return Err(GraphError::Poisoned);
        }
        Ok(self.has_execs.load(Ordering::Acquire).then(|| self.lock()))
    }

    /// Refused if poisoned (without taking the guard).
    pub fn check_poisoned(&self) -> Result<()> {
        match self.poisoned.load(Ordering::Acquire) {
            true => Err(GraphError::Poisoned),
            false => Ok(()),
        }
    }

    /// The guard, unconditionally (execs use it for per-node calls).
    pub fn lock(&self) -> MutexGuard<'_, ()> {
        self.guard.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks the graph shared with an exec: from now on calls take the guard.
    pub fn share_with_exec(&self) {
        self.has_execs.store(true, Ordering::Release);
    }

    pub fn poison(&self) {
        self.poisoned.store(true, Ordering::Release);
    }
}

impl Drop for RawGraph {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: we own the graph and nothing uses it after this.
            // A failure here cannot be reported from Drop; the driver only
            // fails for an invalid handle, which ownership rules out.
            let _ = unsafe { result::graph_destroy(self.raw) };
        }
    }
}

/// Where a graph's allocation comes from.
#[derive(Debug, Clone)]
pub(crate) enum AllocOrigin {
    /// One of its alloc nodes.
    Node(u32),
    /// Another graph's launch; bound with `bind_escaped` (live from this
    /// graph's start), with the allocation's shared state.
    Escaped(Arc<crate::escape::EscapeState>),
}

/// A graph allocation: its alloc node, its free node, the nodes using it.
#[derive(Debug, Clone)]
pub(crate) struct AllocInfo {
    pub origin: AllocOrigin,
    /// Its device address (fixed at the alloc node).
    pub ptr: u64,
    pub freed_by: Option<u32>,
    /// Top-level nodes that use it (a body's use counts as its conditional node).
    pub users: Vec<u32>,
}

impl AllocInfo {
    /// Its alloc node, if this graph makes it.
    pub fn node(&self) -> Option<u32> {
        match self.origin {
            AllocOrigin::Node(node) => Some(node),
            AllocOrigin::Escaped(_) => None,
        }
    }
}

/// Node records and bookkeeping shared by a graph and its conditional bodies.
#[derive(Debug, Default, Clone)]
pub(crate) struct Registry {
    pub nodes: Vec<NodeInfo>,
    pub allocs: Vec<AllocInfo>,
    /// User objects the graph holds references to (host closures, kept
    /// values), so a parent graph can retain them too.
    pub user_objects: Vec<usize>,
    /// Every node's label, one after another: one growing string per graph
    /// instead of an allocation per node.
    labels: String,
    /// Every node's dependency indices, one list after another.
    dep_list: Vec<u32>,
    /// Kernel nodes that set a conditional handle: (handle, node).
    pub setters: Vec<(sys::CUgraphConditionalHandle, u32)>,
    /// Nodes that use a host buffer: (buffer, node, writes).
    pub host_uses: Vec<(u64, u32, bool)>,
    /// Host buffers the graph owns (see `host`).
    pub host_buffers: usize,
    /// Whether a copy node (or a child's) touches host memory.
    pub host_copies: bool,
    /// Where this graph's host closures report panics (made with the first
    /// host node), and those of graphs added as children.
    pub host_faults: Vec<Arc<HostFaults>>,
}

impl Registry {
    /// This graph's host-fault slot (the first), made on first use.
    pub fn host_faults(&mut self) -> &Arc<HostFaults> {
        if self.host_faults.is_empty() {
            self.host_faults.push(Arc::default());
        }
        &self.host_faults[0]
    }

    /// Reports the first host-node panic not yet reported.
    pub fn take_host_fault(&self) -> Result<()> {
        self.host_faults.iter().try_for_each(|f| f.take())
    }

    pub fn label_of(&self, raw: sys::CUgraphNode) -> Option<String> {
        if raw.is_null() {
            return None;
        }
        let index = self.nodes.iter().position(|n| n.raw == raw)?;
        Some(self.label(index).to_string())
    }

    /// The label of node `index`.
    pub fn label(&self, index: usize) -> &str {
        let (start, end) = self.nodes[index].label;
        &self.labels[start as usize..end as usize]
    }

    /// Room for `nodes` more records (labels and dependencies estimated).
    fn reserve(&mut self, nodes: usize) {
        self.nodes.reserve(nodes);
        self.labels.reserve(nodes * 8);
        self.dep_list.reserve(nodes * 2);
    }

    /// Every node's label, in the order they were added.
    pub fn labels(&self) -> Vec<String> {
        (0..self.nodes.len())
            .map(|i| self.label(i).to_string())
            .collect()
    }

    /// The dependency indices of node `index`.
    pub fn deps(&self, index: usize) -> &[u32] {
        let (start, end) = self.nodes[index].deps;
        &self.dep_list[start as usize..end as usize]
    }

    /// Why node `index` may not use allocation `alloc` of this registry:
    /// it must be ordered after the alloc node and before the free node
    /// (through its top-level node, for a node of a conditional body).
    /// None if it may, or if there is no such allocation.
    pub fn alloc_use_error(&self, index: usize, alloc: u32) -> Option<String> {
        let info = self.allocs.get(alloc as usize)?;
        let top = self.nodes.get(index)?.top as usize;
        let alloc_label = self.alloc_label(info);
        if info.node().is_some() && self.nodes[top].allocs_before.binary_search(&alloc).is_err() {
            return Some(format!(
                "uses the allocation of `{alloc_label}` but is not ordered after it"
            ));
        }
        match info.freed_by {
            Some(free) if !self.is_ancestor(top, free as usize) => Some(format!(
                "uses the allocation of `{alloc_label}`, which `{}` may already have freed (it is not ordered before the free)",
                self.label(free as usize)
            )),
            _ => None,
        }
    }

    /// An allocation's name in messages: its alloc node's label (that of
    /// the graph that made it, for one bound with `bind_escaped`).
    pub fn alloc_label<'r>(&'r self, info: &'r AllocInfo) -> &'r str {
        match &info.origin {
            AllocOrigin::Node(node) => self.label(*node as usize),
            AllocOrigin::Escaped(state) => &state.label,
        }
    }

    /// Node `index` and the conditional nodes holding it, innermost first,
    /// with each one's level.
    fn holders(&self, index: u32) -> Vec<(u32, u64)> {
        let mut chain = Vec::new();
        let mut at = index;
        while let Some(info) = self.nodes.get(at as usize) {
            chain.push((at, info.level));
            at = info.holder;
        }
        chain
    }

    /// Whether the existing node `earlier` always runs before a new node at
    /// `level`, held by `holder`, after `deps`, or never in the same launch
    /// as it (the two sit in different arms of one conditional node).
    pub fn ordered_before_new(
        &self,
        earlier: u32,
        level: u64,
        holder: Option<u32>,
        deps: &[Node],
    ) -> bool {
        let mine = self.holders(earlier);
        // The new node's chain: itself (not yet recorded), then its holders.
        let mut theirs: Vec<(Option<u32>, u64)> = vec![(None, level)];
        if let Some(h) = holder {
            theirs.extend(self.holders(h).into_iter().map(|(n, l)| (Some(n), l)));
        }
        // The innermost level both are in, and each one's node there.
        for (new_side, level) in theirs {
            let Some(&(old_side, _)) = mine.iter().find(|(_, l)| *l == level) else {
                continue;
            };
            return match new_side {
                None => deps.iter().any(|d| {
                    d.index == old_side || self.is_ancestor(old_side as usize, d.index as usize)
                }),
                // Both inside one conditional node: in different arms.
                Some(new_side) if new_side == old_side => true,
                Some(new_side) => self.is_ancestor(old_side as usize, new_side as usize),
            };
        }
        false
    }

    /// Whether node `a` is an ancestor of node `b` (a path of edges a -> b).
    pub fn is_ancestor(&self, a: usize, b: usize) -> bool {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack: Vec<u32> = self.deps(b).to_vec();
        while let Some(n) = stack.pop() {
            let n = n as usize;
            if n == a {
                return true;
            }
            if !std::mem::replace(&mut seen[n], true) {
                stack.extend_from_slice(self.deps(n));
            }
        }
        false
    }

    /// Records a node added to the driver's graph at `place`; returns its
    /// index.
    pub fn push_node(
        &mut self,
        label: &str,
        (raw, kind): (sys::CUgraphNode, NodeKind),
        place: Place,
        deps: &[Node],
        allocs_before: Vec<u32>,
    ) -> u32 {
        let Place { level, top, holder } = place;
        let index = self.nodes.len() as u32;
        let label_start = self.labels.len() as u32;
        self.labels.push_str(label);
        let deps_start = self.dep_list.len() as u32;
        self.dep_list.extend(deps.iter().map(|d| d.index));
        self.nodes.push(NodeInfo {
            label: (label_start, self.labels.len() as u32),
            raw,
            kind,
            level,
            deps: (deps_start, self.dep_list.len() as u32),
            allocs_before,
            top: top.unwrap_or(index),
            holder: holder.unwrap_or(u32::MAX),
        });
        index
    }
}

/// Where a node sits: its graph level, the root-level node it runs under
/// (None at the root: itself), and the conditional node holding its level.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Place {
    pub level: u64,
    pub top: Option<u32>,
    pub holder: Option<u32>,
}

/// A CUDA graph under construction (or a conditional body of one).
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
    pub(crate) registry: Registry,
    pub(crate) resources: SharedResources<'a>,
    pub(crate) live_execs: Arc<AtomicUsize>,
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
        f.debug_struct("Graph")
            .field("instance", &self.instance)
            .field("nodes", &self.registry().nodes.len())
            .finish()
    }
}

impl<'a> Graph<'a> {
    /// An empty graph in `ctx`.
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        crate::driver::require_driver()?;
        let raw = create_graph(ctx)?;
        Ok(Graph::root(
            raw,
            ctx,
            next_id(),
            Arc::default(),
            Registry::default(),
        ))
    }

    /// A root graph around an owned `raw` graph.
    fn root(
        raw: CUgraph,
        ctx: &Arc<CudaContext>,
        resource_id: u64,
        resources: SharedResources<'a>,
        registry: Registry,
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
            live_execs: Arc::default(),
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

    pub(crate) fn registry(&self) -> &Registry {
        &self.registry
    }

    pub(crate) fn is_body(&self) -> bool {
        self.top_node.is_some()
    }

    /// Binds a slice the graph only reads. It stays borrowed while the graph
    /// or any of its execs lives.
    ///
    /// A slice of another context gives a buffer every node refuses (its
    /// uses could not be tracked: cudarc records events only on streams of
    /// the slice's own context).
    #[must_use = "the graph uses the slice only through the returned `Buf`"]
    pub fn bind<T>(&mut self, slice: &'a CudaSlice<T>) -> Buf<'a, T> {
        let ptr = raw_ptr(slice);
        if !self.same_context(slice.context()) {
            return Buf::new(ptr, slice.len(), false, FOREIGN_ROOT, None);
        }
        let event = UseEvent::read_of(slice);
        lock(&self.resources)
            .bindings
            .push(Binding::Read(slice, event));
        Buf::new(ptr, slice.len(), false, self.resource_id, None)
    }

    fn same_context(&self, ctx: &Arc<CudaContext>) -> bool {
        ctx.cu_ctx() == self.ctx.cu_ctx()
    }

    /// Binds a slice the graph writes (and may read). It stays exclusively
    /// borrowed while the graph or any of its execs lives.
    ///
    /// A slice of another context gives a buffer every node refuses, as
    /// for [`Graph::bind`].
    #[must_use = "the graph uses the slice only through the returned `Buf`"]
    pub fn bind_mut<T: 'static>(&mut self, slice: &'a mut CudaSlice<T>) -> Buf<'a, T> {
        let ptr = raw_ptr(slice);
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
        label: &str,
        kind: NodeKind,
        deps: &[Node],
        edges: Option<&[EdgeKind]>,
        uses: &[BufferUse],
        params: &mut sys::CUgraphNodeParams,
    ) -> Result<Node> {
        let _entered = self.owner.enter()?;
        self.check_deps(label, deps)?;
        let allocs_before = self.check_uses(label, deps, uses)?;
        if edges.is_some_and(|kinds| kinds.len() != deps.len()) {
            return Err(GraphError::invalid(
                label,
                "one edge kind is needed per dependency",
            ));
        }
        let registry = &self.registry;
        // Few nodes have more than a handful of dependencies: keep their
        // handles and edge data on the stack.
        const INLINE: usize = 8;
        let mut inline_deps = [std::ptr::null_mut(); INLINE];
        let mut inline_edges = [EdgeKind::Full.edge_data(); INLINE];
        let (heap_deps, heap_edges): (Vec<sys::CUgraphNode>, Vec<sys::CUgraphEdgeData>);
        let raw_deps: &[sys::CUgraphNode] = if deps.len() <= INLINE {
            for (slot, dep) in inline_deps.iter_mut().zip(deps) {
                *slot = registry.nodes[dep.index as usize].raw;
            }
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
        self.ctx.bind_to_thread().op_at("cuCtxSetCurrent", label)?;
        // SAFETY: the graph and its dependencies are live (owned by self);
        // params were fully initialised by the caller for `kind`; edge data
        // has one entry per dependency (checked above); a context is current.
        let added = unsafe { result::add_node(self.raw, raw_deps, edge_data, params) };
        let raw = added.op_at("cuGraphAddNode", label)?;
        let registry = &mut self.registry;
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
        registry.push_node(label, (raw, kind), place, deps, allocs_before);
        Ok(Node {
            graph: self.instance,
            level: self.level,
            index,
        })
    }

    /// A kernel may set only handles of its own graph, and two kernels that
    /// set one handle must be ordered (CUDA: concurrent
    /// `cudaGraphSetConditional` calls on one handle are undefined), unless
    /// they sit in different arms of one conditional node.
    pub(crate) fn check_setters(
        &self,
        label: &str,
        deps: &[Node],
        handles: &[CondHandle],
    ) -> Result<()> {
        let registry = &self.registry;
        for handle in handles {
            if handle.graph() != self.instance {
                return Err(GraphError::ForeignHandle {
                    what: format!("the conditional handle set by node `{label}`"),
                });
            }
            for &(raw, other) in &registry.setters {
                if raw == handle.raw()
                    && !registry.ordered_before_new(other, self.level, self.holder, deps)
                {
                    return Err(GraphError::invalid(
                        label,
                        format!(
                            "sets a conditional handle that `{}` also sets, and the two are not ordered; \
                             add an edge between them (CUDA leaves concurrent sets of one handle undefined)",
                            registry.label(other as usize)
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    fn check_deps(&self, label: &str, deps: &[Node]) -> Result<()> {
        let registry = &self.registry;
        for dep in deps {
            if dep.graph != self.instance || dep.index as usize >= registry.nodes.len() {
                return Err(GraphError::ForeignHandle {
                    what: format!("a dependency of node `{label}`"),
                });
            }
            if dep.level != self.level {
                let other = registry.label(dep.index as usize);
                return Err(GraphError::invalid(
                    label,
                    format!("dependency `{other}` is in another graph level (a conditional body is its own graph)"),
                ));
            }
        }
        Ok(())
    }

    /// Buffer uses must be of this graph; a graph allocation must be ordered
    /// after its alloc node and not yet freed. Returns the new node's
    /// `allocs_before`.
    fn check_uses(&self, label: &str, deps: &[Node], uses: &[BufferUse]) -> Result<Vec<u32>> {
        let registry = &self.registry;
        for u in uses {
            if u.root != self.resource_id {
                return Err(GraphError::ForeignHandle {
                    what: format!("a buffer used by node `{label}`"),
                });
            }
            if u.write && !u.writable {
                return Err(GraphError::invalid(
                    label,
                    "writes a buffer that was bound read-only; bind it with `bind_mut`",
                ));
            }
        }
        let unknown = || GraphError::ForeignHandle {
            what: format!("an allocation used by node `{label}`"),
        };
        // A graph without allocations (most graphs) has nothing to order.
        if registry.allocs.is_empty() {
            return match uses.iter().any(|u| u.alloc.is_some()) {
                true => Err(unknown()),
                false => Ok(Vec::new()),
            };
        }
        let mut before: Vec<u32> = Vec::new();
        for dep in deps {
            before.extend_from_slice(&registry.nodes[dep.index as usize].allocs_before);
        }
        before.sort_unstable();
        before.dedup();
        // A body's uses are ordered through its top-level node.
        let ordered: &[u32] = match self.top_node {
            Some(top) => &registry.nodes[top as usize].allocs_before,
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
                return Err(GraphError::invalid(
                    label,
                    format!(
                        "uses the allocation of `{alloc_label}` after `{}` frees it",
                        registry.label(free as usize)
                    ),
                ));
            }
            if info.node().is_some() && ordered.binary_search(&alloc).is_err() {
                return Err(GraphError::invalid(
                    label,
                    format!("uses the allocation of `{alloc_label}` but is not ordered after it; add `{alloc_label}` to its dependencies"),
                ));
            }
        }
        Ok(before)
    }

    /// Adds a kernel node: `kernel<<<config>>>(args)` after `deps`.
    pub fn add_kernel<A: KernelArgs>(
        &mut self,
        label: &str,
        kernel: &Kernel<A>,
        config: LaunchConfig,
        args: A::Args<'a>,
        deps: &[Node],
    ) -> Result<KernelNode<A>> {
        self.add_kernel_with_edges(label, kernel, config, args, deps, None)
    }

    /// Adds a kernel node whose incoming edges carry `edges[i]` from
    /// `deps[i]` (programmatic dependent launch).
    pub fn add_kernel_with_edges<A: KernelArgs>(
        &mut self,
        label: &str,
        kernel: &Kernel<A>,
        config: LaunchConfig,
        args: A::Args<'a>,
        deps: &[Node],
        edges: Option<&[EdgeKind]>,
    ) -> Result<KernelNode<A>> {
        if !kernel.is_pdl_aware() && edges.is_some_and(|e| e.iter().any(|k| k.is_programmatic())) {
            return Err(not_pdl_aware(label, kernel.name()));
        }
        // Encoded in place: the encoder is a few hundred bytes, not worth
        // moving between the generic and the shared half.
        let mut encoded = ArgEncoder::default();
        let encoding = A::encode(&args, &mut encoded);
        let node = self.add_encoded_kernel(
            label,
            kernel.function(),
            &config,
            (&encoded, encoding),
            deps,
            edges,
        )?;
        Ok(KernelNode {
            node,
            config,
            function: kernel.function().cu_function(),
            _args: PhantomData,
        })
    }

    /// What generated builders call for each kernel node: adds it unless an
    /// earlier node of the build failed, and keeps a failure in `failure`
    /// instead of returning it (the handle is then [`KernelNode::UNSET`],
    /// never used: the builder settles before any other node and at the
    /// end, returning the first failure). With no error path per node, a
    /// builder of thousands of kernels compiles in linear time; with one,
    /// LLVM's MemCpyOpt went quadratic (18 s for 1,000 nodes, now 3.4 s).
    #[doc(hidden)]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub fn __add_kernel<A: KernelArgs>(
        &mut self,
        failure: &mut Option<GraphError>,
        label: &str,
        kernel: &Kernel<A>,
        config: LaunchConfig,
        args: A::Args<'a>,
        deps: &[Node],
        edges: Option<&[EdgeKind]>,
    ) -> KernelNode<A> {
        if failure.is_none() {
            match self.add_kernel_with_edges(label, kernel, config, args, deps, edges) {
                Ok(node) => return node,
                Err(error) => *failure = Some(error),
            }
        }
        KernelNode::UNSET
    }

    /// The part of adding a kernel node that does not depend on its
    /// parameter types (compiled once, optimized, in this crate).
    #[inline(never)]
    fn add_encoded_kernel(
        &mut self,
        label: &str,
        function: &cudarc::driver::CudaFunction,
        config: &LaunchConfig,
        (encoded, encoding): (&ArgEncoder<'a>, std::result::Result<(), String>),
        deps: &[Node],
        edges: Option<&[EdgeKind]>,
    ) -> Result<Node> {
        if let Err(reason) = config
            .validate()
            .and(encoding)
            .and_then(|()| encoded.check_bounds(config))
        {
            return Err(GraphError::invalid(label, reason));
        }
        self.owner.check_poisoned()?;
        if !encoded.conds().is_empty() {
            self.check_setters(label, deps, encoded.conds())?;
        }
        // A null context means the current one, which `add_raw` binds to
        // the graph's context before adding (as hand-written driver code
        // passes it).
        let node = with_kernel_params(
            function.cu_function(),
            config,
            encoded,
            std::ptr::null_mut(),
            |params| self.add_raw(label, NodeKind::Kernel, deps, edges, encoded.uses(), params),
        )?;
        for handle in encoded.conds() {
            self.registry.setters.push((handle.raw(), node.index));
        }
        if !encoded.execs().is_empty() {
            lock(&self.resources)
                .device_targets
                .extend(encoded.execs().iter().cloned());
        }
        // Consecutive nodes of one kernel keep its module alive once.
        if self.last_function != function.cu_function() {
            lock(&self.resources).functions.push(function.clone());
            self.last_function = function.cu_function();
        }
        Ok(node)
    }

    /// Sets a kernel node's scheduling priority (effective when the exec is
    /// instantiated with `use_node_priority`).
    pub fn set_priority<A>(&mut self, node: &KernelNode<A>, priority: i32) -> Result<()> {
        let _entered = self.owner.enter()?;
        let (raw, label) = self.node_raw(node.node)?;
        // SAFETY: a zeroed attribute value is valid; we set the priority member.
        let mut value: sys::CUkernelNodeAttrValue = unsafe { std::mem::zeroed() };
        value.priority = priority;
        // SAFETY: the node is a live kernel node of this graph.
        unsafe {
            sys::cuGraphKernelNodeSetAttribute(
                raw,
                sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PRIORITY,
                &value,
            )
        }
        .result()
        .op_at("cuGraphKernelNodeSetAttribute", &label)
    }

    pub(crate) fn node_raw(&self, node: Node) -> Result<(sys::CUgraphNode, String)> {
        let registry = self.registry();
        match registry.nodes.get(node.index as usize) {
            Some(info) if node.graph == self.instance => {
                Ok((info.raw, registry.label(node.index as usize).to_string()))
            }
            _ => Err(GraphError::ForeignHandle {
                what: "a node".to_string(),
            }),
        }
    }

    /// Adds an empty node (a join point).
    pub fn add_empty(&mut self, label: &str, deps: &[Node]) -> Result<Node> {
        let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY);
        self.add_raw(label, NodeKind::Empty, deps, None, &[], &mut params)
    }

    /// Adds a node that records `event`.
    pub fn add_event_record(
        &mut self,
        label: &str,
        event: &'a CudaEvent,
        deps: &[Node],
    ) -> Result<Node> {
        self.refuse_foreign_event(label, event)?;
        let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EVENT_RECORD);
        params.__bindgen_anon_1.eventRecord.event = event.cu_event();
        self.add_raw(label, NodeKind::EventRecord, deps, None, &[], &mut params)
    }

    /// Adds a node that waits for `event`.
    pub fn add_event_wait(
        &mut self,
        label: &str,
        event: &'a CudaEvent,
        deps: &[Node],
    ) -> Result<Node> {
        self.refuse_foreign_event(label, event)?;
        let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_WAIT_EVENT);
        params.__bindgen_anon_1.eventWait = sys::CUDA_EVENT_WAIT_NODE_PARAMS {
            event: event.cu_event(),
        };
        self.add_raw(label, NodeKind::EventWait, deps, None, &[], &mut params)
    }

    fn refuse_foreign_event(&self, label: &str, event: &CudaEvent) -> Result<()> {
        match self.same_context(event.context()) {
            true => Ok(()),
            false => Err(GraphError::ForeignHandle {
                what: format!("the event of node `{label}` (it is of another context)"),
            }),
        }
    }

    /// Adds a child graph node running a copy of `child`. The child's bound
    /// buffers, kernels and user objects are kept by this graph.
    pub fn add_child(&mut self, label: &str, child: Graph<'a>, deps: &[Node]) -> Result<Node> {
        if child.is_body() {
            return Err(GraphError::invalid(
                label,
                "a conditional body cannot be a child graph",
            ));
        }
        if child.registry.host_buffers > 0 {
            // Its execs and this graph's could write them at once.
            return Err(GraphError::invalid(
                label,
                "a graph with host buffers cannot be a child graph; add its nodes to this graph",
            ));
        }
        if child.registry.allocs.iter().any(|a| a.node().is_none()) {
            // Its uses could not be ordered after the launch that makes it.
            return Err(GraphError::invalid(
                label,
                "a graph that binds an allocation of another graph (`bind_escaped`) cannot be a \
                 child graph; bind it in this graph instead",
            ));
        }
        if child.registry.host_copies && self.is_body() {
            return Err(GraphError::invalid(
                label,
                "a child graph that copies host memory cannot be in a conditional body (bodies copy device memory only)",
            ));
        }
        let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_GRAPH);
        // Other fields (13.x: the ownership) stay zero: the driver clones.
        params.__bindgen_anon_1.graph.graph = child.raw;
        let uses: Vec<BufferUse> = Vec::new();
        // The driver clones the child: no exec of the child may use it
        // meanwhile (and a poisoned child is refused).
        let child_entered = child.owner.enter()?;
        let node = self.add_raw(label, NodeKind::ChildGraph, deps, None, &uses, &mut params)?;
        drop(child_entered);
        let _entered = self.owner.enter()?;
        // Keep what the child's nodes reference alive as long as this graph.
        let objects = child.registry().user_objects.clone();
        for &object in &objects {
            // SAFETY: the child graph holds a reference, so the object is live.
            unsafe {
                result::graph_retain_user_object(self.owner.raw, object as sys::CUuserObject)
            }
            .op_at("cuGraphRetainUserObject", label)?;
        }
        self.registry.user_objects.extend(objects);
        self.registry.host_copies |= child.registry.host_copies;
        for faults in &child.registry().host_faults {
            if !self
                .registry
                .host_faults
                .iter()
                .any(|f| Arc::ptr_eq(f, faults))
            {
                self.registry.host_faults.push(faults.clone());
            }
        }
        if !Arc::ptr_eq(&self.resources, &child.resources) {
            let mut children = lock(&child.resources).children.clone();
            children.push(child.resources.clone());
            let mut mine = lock(&self.resources);
            for c in children {
                if !Arc::ptr_eq(&c, &self.resources)
                    && !mine.children.iter().any(|m| Arc::ptr_eq(m, &c))
                {
                    mine.children.push(c);
                }
            }
        }
        Ok(node)
    }

    /// A new, empty graph sharing this graph's bound buffers, to be added
    /// with [`Graph::add_child`]: its nodes may use this graph's `Buf`s.
    pub fn child_graph(&self) -> Result<Graph<'a>> {
        self.new_sharing()
    }

    /// A new, empty graph sharing this graph's bound buffers: rebuild a graph
    /// of the same topology with other scalars or other bound buffers, then
    /// update an exec with it ([`Exec::update`](crate::Exec::update)).
    pub fn new_sharing(&self) -> Result<Graph<'a>> {
        let raw = create_graph(&self.ctx)?;
        Ok(Graph::root(
            raw,
            &self.ctx,
            self.resource_id,
            self.resources.clone(),
            Registry::default(),
        ))
    }

    /// Writes the graph in Graphviz DOT, as the driver describes it.
    pub fn dot(&self) -> Result<String> {
        let path = std::env::temp_dir().join(format!(
            "cuda-graph-{}-{}.dot",
            std::process::id(),
            next_id()
        ));
        let c_path = std::ffi::CString::new(path.to_string_lossy().into_owned())
            .map_err(|_| GraphError::invalid("dot", "temporary path contains a NUL byte"))?;
        let _entered = self.owner.enter()?;
        self.ctx.bind_to_thread().op("cuCtxSetCurrent")?;
        let flags = sys::CUgraphDebugDot_flags::CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE as u32;
        // SAFETY: the graph is live; the path is NUL-terminated.
        unsafe { result::debug_dot_print(self.raw, &c_path, flags) }.op("cuGraphDebugDotPrint")?;
        let text = std::fs::read_to_string(&path)
            .map_err(|e| GraphError::invalid("dot", format!("reading {}: {e}", path.display())));
        let _ = std::fs::remove_file(&path);
        text
    }

    /// A copy of this graph (`cuGraphClone`) sharing its bound buffers.
    /// Node handles of the original are not valid with the clone.
    pub fn try_clone(&self) -> Result<Graph<'a>> {
        if self.is_body() {
            return Err(GraphError::invalid(
                "clone",
                "a conditional body cannot be cloned on its own",
            ));
        }
        let _entered = self.owner.enter()?;
        self.ctx.bind_to_thread().op("cuCtxSetCurrent")?;
        // SAFETY: the graph is live.
        let raw = unsafe { result::graph_clone(self.raw) }.op("cuGraphClone")?;
        // Own the clone at once, so an error below destroys it.
        let mut clone = Graph::root(
            raw,
            &self.ctx,
            self.resource_id,
            self.resources.clone(),
            Registry::default(),
        );
        let mut registry = self.registry.clone();
        for index in 0..registry.nodes.len() {
            let original = registry.nodes[index].raw;
            // SAFETY: `original` is a node of the graph `raw` was cloned from.
            let found = unsafe { result::find_in_clone(original, raw) }
                .op_at("cuGraphNodeFindInClone", registry.label(index))?;
            let info = &mut registry.nodes[index];
            info.raw = found;
            if info.level == self.level {
                info.level = clone.level;
            }
        }
        for &object in &registry.user_objects {
            // SAFETY: the original graph holds a reference, so it is live.
            unsafe { result::graph_retain_user_object(raw, object as sys::CUuserObject) }
                .op("cuGraphRetainUserObject")?;
        }
        clone.registry = registry;
        // The clone's nodes use the same host buffers: one live exec among
        // the clone and the original.
        clone.live_execs = self.live_execs.clone();
        Ok(clone)
    }

    /// A body graph of the conditional node `top` (see `conditional`). It
    /// takes this graph's registry until it is dropped (`BodyScope`).
    pub(crate) fn body(&mut self, raw: CUgraph, holder: u32) -> Graph<'a> {
        Graph {
            raw,
            owner: self.owner.clone(),
            instance: self.instance,
            level: next_id(),
            top_node: Some(self.top_node.unwrap_or(holder)),
            holder: Some(holder),
            resource_id: self.resource_id,
            ctx: self.ctx.clone(),
            registry: std::mem::take(&mut self.registry),
            resources: self.resources.clone(),
            live_execs: self.live_execs.clone(),
            last_function: std::ptr::null_mut(),
            _borrows: PhantomData,
        }
    }

    pub(crate) fn has_memory_nodes(&self) -> bool {
        !self.registry().allocs.is_empty()
    }

    /// Whether two execs of the graph could not run side by side: graph
    /// memory (a CUDA rule) or host buffers (both would write them).
    pub(crate) fn needs_one_exec(&self) -> bool {
        self.has_memory_nodes() || self.registry.host_buffers > 0
    }
}

/// A new, empty `CUgraph` in `ctx` (owned by the caller).
pub(crate) fn create_graph(ctx: &Arc<CudaContext>) -> Result<CUgraph> {
    ctx.bind_to_thread().op("cuCtxSetCurrent")?;
    // SAFETY: the context is current.
    unsafe { result::graph_create() }.op("cuGraphCreate")
}

fn raw_ptr<T>(slice: &CudaSlice<T>) -> u64 {
    // The address is read without cudarc's tracking guard: tracking happens
    // at every launch, not at build time.
    let stream = slice.stream().clone();
    let (ptr, guard) = cudarc::driver::DevicePtr::device_ptr(slice, &stream);
    std::mem::forget(guard);
    ptr
}

/// Node parameters of `type_` with every other byte zero (valid for the
/// driver: CUgraphNodeParams may start zeroed).
pub(crate) fn zeroed_params(type_: sys::CUgraphNodeType) -> sys::CUgraphNodeParams {
    // SAFETY: CUgraphNodeParams is plain data for which all-zero is valid.
    let mut params: sys::CUgraphNodeParams = unsafe { std::mem::zeroed() };
    params.type_ = type_;
    params
}

/// A programmatic edge into a kernel that does not wait on its predecessor
/// would let it read their memory early: refused.
#[cold]
fn not_pdl_aware(label: &str, kernel: &str) -> GraphError {
    GraphError::invalid(
        label,
        format!(
            "kernel `{kernel}` follows a programmatic dependent launch edge but is not declared \
             PDL-aware (`KernelDecl::pdl_aware`): it could start before its predecessor finishes"
        ),
    )
}

/// Calls `f` with kernel node parameters for `function<<<config>>>` with
/// the `encoded` arguments, in context `ctx` (null: the current one). The
/// parameters point into storage that lives until `f` returns.
#[inline]
pub(crate) fn with_kernel_params<R>(
    function: sys::CUfunction,
    config: &LaunchConfig,
    encoded: &ArgEncoder<'_>,
    ctx: sys::CUcontext,
    f: impl FnOnce(&mut sys::CUgraphNodeParams) -> R,
) -> R {
    let (words, starts) = encoded.values();
    let count = starts.len();
    let mut pointers = [std::ptr::null_mut(); MAX_PARAMS];
    for (pointer, &start) in pointers.iter_mut().zip(starts) {
        // The driver only reads through `kernelParams` (it copies each
        // parameter's bytes into the node), so pointing it at the
        // encoder's words, which outlive the call, is enough.
        *pointer = words[start as usize..].as_ptr().cast_mut().cast();
    }
    let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL);
    params.__bindgen_anon_1.kernel = sys::CUDA_KERNEL_NODE_PARAMS_v3 {
        func: function,
        gridDimX: config.grid.x,
        gridDimY: config.grid.y,
        gridDimZ: config.grid.z,
        blockDimX: config.block.x,
        blockDimY: config.block.y,
        blockDimZ: config.block.z,
        sharedMemBytes: config.shared_mem_bytes,
        kernelParams: if count == 0 {
            std::ptr::null_mut()
        } else {
            pointers.as_mut_ptr()
        },
        extra: std::ptr::null_mut(),
        kern: std::ptr::null_mut(),
        ctx,
    };
    f(&mut params)
}
