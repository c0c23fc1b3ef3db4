//! What a graph records about its nodes: labels, dependencies, graph
//! allocations and their uses, host faults.

use super::*;
use std::collections::HashMap;

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

// A graph and its execs read one Registry from any thread (both are Send):
// it must stay Send + Sync, which their hand-written `Send` impls would
// not check.
const _: () = {
    const fn send_and_sync<T: Send + Sync>() {}
    send_and_sync::<Registry>();
};

/// Node records and bookkeeping shared by a graph and its conditional bodies.
#[derive(Debug, Default, Clone)]
pub(crate) struct Registry {
    pub nodes: Vec<NodeInfo>,
    pub allocs: Vec<AllocInfo>,
    /// User objects the graph holds references to (host closures, kept
    /// values), so a parent graph can retain them too.
    pub user_objects: Vec<usize>,
    /// Every node's label, one after another: one growing string per graph
    /// instead of an allocation per node. A repeated node's name is kept
    /// once while it stays among the last few names (`recent_names`).
    labels: String,
    /// Repeated nodes' iterations, one list after another (see
    /// `NodeLabel::Indexed`).
    label_indices: Vec<usize>,
    /// The last few repeated nodes' names (address and length, never
    /// (0, 0) for a name) and where `labels` holds each; `next_name`
    /// picks the entry the next new name replaces.
    recent_names: [(usize, usize, (u32, u32)); 4],
    next_name: usize,
    /// Every node's dependency indices, one list after another.
    pub(super) dep_list: Vec<u32>,
    /// Every node's allocations ordered before it, one list after another
    /// (empty for every node of a graph without allocations): a node
    /// record without a `Vec` of its own to make and to drop.
    alloc_sets: Vec<u32>,
    /// The edges other than full ones: (position in `dep_list`, kind).
    /// An update may not change them: the exec keeps its own edges (a
    /// kernel made for a programmatic edge may start early).
    pub(super) edge_kinds: Vec<(u32, EdgeKind)>,
    /// Conditional handles made on the graph or its bodies (a child graph
    /// may make none: see `Graph::add_child`).
    pub cond_handles: usize,
    /// Kernel (and capture) nodes that set each conditional handle.
    pub setters: HandleNodes,
    /// The conditional nodes that read each handle.
    pub readers: HandleNodes,
    /// Nodes that use a host buffer: (buffer, node, writes).
    pub host_uses: Vec<(u64, u32, bool)>,
    /// Its host buffers' memory and uses, for clones (see `host`).
    pub host_rebinding: HostRebinding,
    /// Whether a copy node (or a child's) touches host memory.
    pub host_copies: bool,
    /// Where this graph's host closures report panics (made with the first
    /// host node), and those of graphs added as children.
    pub host_faults: Vec<Arc<HostFaults>>,
    /// Which node order the driver holds: 0 while it is the order the
    /// nodes were added in, a fresh id once something else may have
    /// reordered it (a profile's records, a clone, a child graph with a
    /// non-zero order). `cuGraphExecUpdate` pairs nodes by that order
    /// (the sinks', the edges'), so an exec takes updates only from a
    /// graph whose order matches its own (`Exec::update`).
    pub order: u64,
    /// The kernel nodes' memory as built, in a graph the macro checked.
    pub built_uses: super::built_uses::BuiltUses,
}

/// Nodes by the conditional handle they set or read: the order checks of
/// a new setter or conditional node look at its handle's nodes only (a
/// block of 10,000 iterations, each with its own handle, stays linear).
#[derive(Debug, Default, Clone)]
pub struct HandleNodes(HashMap<sys::CUgraphConditionalHandle, Vec<u32>>);

impl HandleNodes {
    pub fn push(&mut self, handle: sys::CUgraphConditionalHandle, node: u32) {
        self.0.entry(handle).or_default().push(node);
    }

    /// The nodes of `handle`, in the order they were added.
    pub fn of(&self, handle: sys::CUgraphConditionalHandle) -> &[u32] {
        self.0.get(&handle).map_or(&[], Vec::as_slice)
    }

    pub fn contains(&self, handle: sys::CUgraphConditionalHandle, node: u32) -> bool {
        self.of(handle).contains(&node)
    }
}

/// A registry's vectors go to the next root graph this thread makes.
impl Drop for Registry {
    fn drop(&mut self) {
        super::spare_records::keep(self);
    }
}

impl Registry {
    /// Takes, for this empty registry, the vectors of the last one this
    /// thread dropped, if it kept them (see `spare_records`).
    pub fn use_spare_records(&mut self) {
        if let Some(records) = super::spare_records::take() {
            debug_assert!(self.nodes.is_empty() && self.labels.is_empty());
            self.nodes = records.nodes;
            self.labels = records.labels;
            self.label_indices = records.label_indices;
            self.dep_list = records.dep_list;
            self.built_uses.use_buffer(records.uses);
        }
    }

    /// Its vectors that `use_spare_records` reuses, leaving it none.
    pub(super) fn take_records(&mut self) -> super::spare_records::Records {
        super::spare_records::Records {
            nodes: std::mem::take(&mut self.nodes),
            labels: std::mem::take(&mut self.labels),
            label_indices: std::mem::take(&mut self.label_indices),
            dep_list: std::mem::take(&mut self.dep_list),
            uses: self.built_uses.take_buffer(),
        }
    }

    /// How many host buffers the graph owns (see `host`).
    pub fn host_buffers(&self) -> usize {
        self.host_rebinding.buffers.len()
    }

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
        Some(self.label(index).into_owned())
    }

    /// The label of node `index` (spelled out for a repeated node:
    /// `step[3][17]`).
    pub fn label(&self, index: usize) -> Cow<'_, str> {
        let info = &self.nodes[index];
        let (start, end) = info.label;
        let name = &self.labels[start as usize..end as usize];
        match info.indices {
            (first, last) if first == last => Cow::Borrowed(name),
            (first, last) => Cow::Owned(crate::repeat::spell(
                name,
                &self.label_indices[first as usize..last as usize],
            )),
        }
    }

    /// Room for `nodes` more records (labels and dependencies estimated).
    /// A hint: generated builders guess (a nested block guesses that every
    /// lane repeats this one's count), so it is capped, and room that
    /// cannot be had is left for the records to grow into one by one.
    pub(super) fn reserve(&mut self, nodes: usize) {
        /// About 90 MB of records; a larger graph grows past it.
        const MOST: usize = 1 << 20;
        let nodes = nodes.min(MOST);
        let _ = self.nodes.try_reserve(nodes);
        let _ = self.labels.try_reserve(nodes * 8);
        let _ = self.dep_list.try_reserve(nodes * 2);
        self.built_uses.reserve(nodes);
    }

    /// The device address of the allocation made by the alloc node
    /// labelled `label`, if there is one.
    pub fn allocation_address(&self, label: &str) -> Option<u64> {
        self.allocs
            .iter()
            .find(|alloc| {
                alloc
                    .node()
                    .is_some_and(|node| self.label(node as usize) == label)
            })
            .map(|alloc| alloc.ptr)
    }

    /// Every node's label, in the order they were added.
    pub fn labels(&self) -> Vec<String> {
        (0..self.nodes.len())
            .map(|i| self.label(i).to_string())
            .collect()
    }

    /// Whether `other` has this registry's nodes, index by index: the same
    /// kinds, dependencies in the same order and of the same edge kinds,
    /// top-level nodes, conditional nodes and bodies. `cuGraphExecUpdate`
    /// pairs two graphs' nodes by the driver's order of them (sinks in the order they were added, then
    /// each node's dependencies in the order given), so with both graphs'
    /// nodes in the order they were added (`order` 0) it then pairs node i
    /// with node i, as the exec's node handles assume.
    pub fn same_shape(&self, other: &Registry) -> bool {
        if self.nodes.len() != other.nodes.len()
            || self.dep_list != other.dep_list
            || self.edge_kinds != other.edge_kinds
        {
            return false;
        }
        // Bodies are named by level ids, which differ between graphs: the
        // two graphs' bodies must correspond one to one.
        let (mut there, mut back) = (HashMap::new(), HashMap::new());
        self.nodes.iter().zip(&other.nodes).all(|(a, b)| {
            a.kind == b.kind
                && a.deps == b.deps
                && a.top == b.top
                && a.holder == b.holder
                && (a.holder == u32::MAX
                    || (*there.entry(a.level).or_insert(b.level) == b.level
                        && *back.entry(b.level).or_insert(a.level) == a.level))
        })
    }

    /// Whether one more node with `label` and `deps` dependencies fits the
    /// records, whose positions are `u32`s (a node past them would wrap
    /// its index, label or dependencies onto another node's).
    pub fn has_room(&self, label: NodeLabel<'_>, deps: usize) -> bool {
        const MOST: usize = crate::node::MAX_NODES;
        let (text, indices) = match label {
            NodeLabel::Plain(text) => (text.len(), 0),
            NodeLabel::Indexed(name, indices) => (name.len(), indices.len()),
        };
        self.nodes.len() < MOST
            && text <= MOST - self.labels.len().min(MOST)
            && indices <= MOST - self.label_indices.len().min(MOST)
            && deps <= MOST - self.dep_list.len().min(MOST)
    }

    /// Whether a node ordered after `allocs` more allocations fits
    /// `alloc_sets`, whose positions are `u32`s.
    pub fn has_room_for_allocs(&self, allocs: usize) -> bool {
        allocs <= u32::MAX as usize - self.alloc_sets.len().min(u32::MAX as usize)
    }

    /// The allocations ordered before node `index` (or made by it), sorted.
    pub fn allocs_before(&self, index: usize) -> &[u32] {
        let (start, end) = self.nodes[index].allocs;
        &self.alloc_sets[start as usize..end as usize]
    }

    /// Records that node `index`, the last added, makes allocation `alloc`
    /// (newer than every other, so its list stays sorted).
    pub fn add_alloc_made_by_last(&mut self, index: u32, alloc: u32) {
        let info = &mut self.nodes[index as usize];
        assert_eq!(
            info.allocs.1 as usize,
            self.alloc_sets.len(),
            "the alloc node is the last node added"
        );
        self.alloc_sets.push(alloc);
        info.allocs.1 += 1;
    }

    /// Appends `text` to the labels, returning where it is.
    fn push_label(&mut self, text: &str) -> (u32, u32) {
        let start = self.labels.len() as u32;
        self.labels.push_str(text);
        (start, self.labels.len() as u32)
    }

    /// Where `labels` holds a repeated node's `name`: stored once for the
    /// names of the last few such nodes (a block of a few kernels).
    fn repeated_name(&mut self, name: &'static str) -> (u32, u32) {
        let key = (name.as_ptr() as usize, name.len());
        if let Some(&(_, _, at)) = self.recent_names.iter().find(|n| (n.0, n.1) == key) {
            return at;
        }
        let at = self.push_label(name);
        let slot = self.next_name % self.recent_names.len();
        self.recent_names[slot] = (key.0, key.1, at);
        self.next_name = self.next_name.wrapping_add(1);
        at
    }

    /// Records a node added to the driver's graph at `place`; returns its
    /// index. (Inlined into `Graph::add_raw`, its one caller: a call's
    /// spills and argument moves were a sixth of it.)
    #[inline]
    pub fn push_node(
        &mut self,
        label: NodeLabel<'_>,
        (raw, kind): (sys::CUgraphNode, NodeKind),
        place: Place,
        deps: &[Node],
        allocs_before: &[u32],
    ) -> u32 {
        let Place { level, top, holder } = place;
        let index = self.nodes.len() as u32;
        let indices_start = self.label_indices.len() as u32;
        let label = match label {
            NodeLabel::Plain(text) => self.push_label(text),
            NodeLabel::Indexed(name, indices) => {
                if self.label_indices.capacity() == 0 {
                    // The first repeated node: room for as many iterations
                    // as the build reserved nodes for (a repeated block's
                    // loop reserves its count), not a growth per doubling.
                    let nodes = self.nodes.capacity() - self.nodes.len();
                    let _ = self.label_indices.try_reserve(nodes * indices.len());
                }
                // One push each: a block's one or two indices, not a
                // `memcpy` call.
                for &index in indices {
                    self.label_indices.push(index);
                }
                self.repeated_name(name)
            }
        };
        // Pushes, not `extend`s: a list of none or one, most often, for
        // which `extend` costs a copy call or a loop set up.
        let allocs_start = self.alloc_sets.len() as u32;
        for &alloc in allocs_before {
            self.alloc_sets.push(alloc);
        }
        let deps_start = self.dep_list.len() as u32;
        for dep in deps {
            self.dep_list.push(dep.index);
        }
        self.nodes.push(NodeInfo {
            label,
            indices: (indices_start, self.label_indices.len() as u32),
            raw,
            kind,
            level,
            deps: (deps_start, self.dep_list.len() as u32),
            allocs: (allocs_start, self.alloc_sets.len() as u32),
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

/// A host buffer's memory with its element type erased, so that a clone
/// can make its own.
pub(crate) trait HostMemory: Send + Sync {
    /// New zeroed memory of the same type and length.
    fn fresh(&self, ctx: &Arc<CudaContext>) -> Result<Arc<dyn HostMemory>>;
    fn ptr(&self) -> *mut std::ffi::c_void;
    fn into_any(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync>;
}

/// Makes a host node's closure over other memory of its buffer (a
/// clone's), or None for memory of another type.
pub(crate) type HostNodeMaker = Arc<
    dyn Fn(Arc<dyn std::any::Any + Send + Sync>) -> Option<Box<dyn Fn() + Send + Sync>>
        + Send
        + Sync,
>;

/// What a graph records of its host buffers' uses, so that a clone can be
/// given memory of its own.
#[derive(Clone, Default)]
pub(crate) struct HostRebinding {
    /// Each host buffer: its id and memory.
    pub buffers: Vec<(u64, Arc<dyn HostMemory>)>,
    /// Host nodes whose closure takes a host buffer.
    pub nodes: Vec<(u32, u64, HostNodeMaker)>,
    /// For a clone: the buffer ids of the graph it was cloned from (and of
    /// that one's origin), with this graph's ids for them.
    pub renamed: Vec<(u64, u64)>,
}

impl std::fmt::Debug for HostRebinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostRebinding")
            .field("buffers", &self.buffers.len())
            .field("nodes", &self.nodes.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(registry: &mut Registry, label: NodeLabel<'_>) -> usize {
        let place = Place {
            level: 1,
            top: None,
            holder: None,
        };
        let raw = (std::ptr::null_mut(), NodeKind::Kernel);
        registry.push_node(label, raw, place, &[], &[]) as usize
    }

    #[test]
    fn repeated_labels_are_spelled_when_asked() {
        let mut registry = Registry::default();
        let init = push(&mut registry, "init".into());
        let steps: Vec<usize> = [[0, 0], [0, 1], [3, 17], [12, 345]]
            .iter()
            .map(|indices| push(&mut registry, NodeLabel::Indexed("step", indices)))
            .collect();
        let done = push(&mut registry, NodeLabel::Plain("done"));
        let lane = push(&mut registry, NodeLabel::Indexed("lane", &[7]));
        let none = push(&mut registry, NodeLabel::Indexed("solo", &[]));
        assert_eq!(registry.label(init), "init");
        let spelled: Vec<String> = steps.iter().map(|&i| registry.label(i).into()).collect();
        assert_eq!(
            spelled,
            ["step[0][0]", "step[0][1]", "step[3][17]", "step[12][345]"]
        );
        assert_eq!(registry.label(done), "done");
        assert_eq!(registry.label(lane), "lane[7]");
        assert_eq!(registry.label(none), "solo");
        // A run of nodes of one name keeps the name once.
        assert_eq!(registry.labels, "initstepdonelanesolo");
        // So do a few names that alternate (a block of several kernels).
        let mut alternating = Registry::default();
        for i in 0..3 {
            for name in ["fill", "add", "again"] {
                push(&mut alternating, NodeLabel::Indexed(name, &[i]));
            }
        }
        assert_eq!(alternating.labels, "filladdagain");
        assert_eq!(alternating.label(7), "add[2]");
        // Past the few it remembers, a name is stored again, spelled alike.
        let mut many = Registry::default();
        let names = ["a", "b", "c", "d", "e"];
        for i in 0..2 {
            for name in names {
                push(&mut many, NodeLabel::Indexed(name, &[i]));
            }
        }
        let spelled: Vec<String> = (0..10).map(|i| many.label(i).into()).collect();
        assert_eq!(
            spelled,
            ["a[0]", "b[0]", "c[0]", "d[0]", "e[0]", "a[1]", "b[1]", "c[1]", "d[1]", "e[1]"]
        );
        assert_eq!(
            registry.labels(),
            [
                "init",
                "step[0][0]",
                "step[0][1]",
                "step[3][17]",
                "step[12][345]",
                "done",
                "lane[7]",
                "solo"
            ]
        );
        assert_eq!(
            NodeLabel::Indexed("step", &[3, 17]).to_string(),
            "step[3][17]"
        );
        assert_eq!(NodeLabel::Plain("x").to_string(), "x");
        // A copy made by a change after sharing keeps the spellings.
        let shared = SharedRegistry::from(registry);
        let mut changed = shared.clone();
        push(&mut changed, "after".into());
        assert_eq!(shared.labels().len(), 8);
        assert_eq!(changed.label(3), "step[3][17]");
        assert_eq!(changed.label(8), "after");
    }

    /// Nodes as `(level, holder, deps)`, each a kernel node.
    fn shaped(nodes: &[(u64, Option<u32>, &[u32])]) -> Registry {
        let mut registry = Registry::default();
        for &(level, holder, deps) in nodes {
            let deps: Vec<Node> = deps
                .iter()
                .map(|&index| Node {
                    graph: 0,
                    level,
                    index,
                })
                .collect();
            let place = Place {
                level,
                top: holder,
                holder,
            };
            let raw = (std::ptr::null_mut(), NodeKind::Kernel);
            registry.push_node("n".into(), raw, place, &deps, &[]);
        }
        registry
    }

    #[test]
    fn same_shape_compares_dependencies_in_order_and_bodies_one_to_one() {
        let diamond = shaped(&[(1, None, &[]), (1, None, &[]), (1, None, &[0, 1])]);
        let again = shaped(&[(9, None, &[]), (9, None, &[]), (9, None, &[0, 1])]);
        assert!(diamond.same_shape(&again), "root levels may differ");
        let swapped = shaped(&[(1, None, &[]), (1, None, &[]), (1, None, &[1, 0])]);
        assert!(
            !diamond.same_shape(&swapped),
            "dependencies in another order"
        );
        let fewer = shaped(&[(1, None, &[]), (1, None, &[])]);
        assert!(!diamond.same_shape(&fewer));
        // Edge kinds: a launch-order edge against a full one.
        let (mut early, mut early_too) = (diamond.clone(), again.clone());
        early.note_edge_kinds(2, &[EdgeKind::Full, EdgeKind::LaunchOrder]);
        assert!(!diamond.same_shape(&early), "an edge of another kind");
        early_too.note_edge_kinds(2, &[EdgeKind::Full, EdgeKind::LaunchOrder]);
        assert!(early.same_shape(&early_too));
        let mut full = again.clone();
        full.note_edge_kinds(2, &[EdgeKind::Full, EdgeKind::Full]);
        assert!(diamond.same_shape(&full), "full edges are implied");
        // Two bodies of conditional node 0: their nodes must map one to one.
        let bodies = shaped(&[(1, None, &[]), (2, Some(0), &[]), (3, Some(0), &[])]);
        let renamed = shaped(&[(1, None, &[]), (7, Some(0), &[]), (8, Some(0), &[])]);
        let merged = shaped(&[(1, None, &[]), (7, Some(0), &[]), (7, Some(0), &[])]);
        assert!(bodies.same_shape(&renamed));
        assert!(!bodies.same_shape(&merged), "two bodies against one");
        assert!(!merged.same_shape(&bodies), "one body against two");
    }
}
