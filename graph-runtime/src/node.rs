//! Node handles and what the runtime remembers about each node.

use crate::kernel::{Dim3, KernelArgs, LaunchConfig};
use cudarc::driver::sys;
use std::marker::PhantomData;

/// The most nodes a graph holds: node indices are `u32`, and `u32::MAX`
/// marks "none" (a node of no conditional body, an unset handle).
pub(crate) const MAX_NODES: usize = u32::MAX as usize;

/// The kind of a node, as CUDA sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NodeKind {
    Kernel,
    Memcpy,
    Memset,
    Host,
    Empty,
    ChildGraph,
    EventRecord,
    EventWait,
    MemAlloc,
    MemFree,
    Conditional,
}

impl NodeKind {
    /// Whether CUDA can enable and disable it in an exec.
    pub fn can_be_disabled(self) -> bool {
        matches!(self, NodeKind::Kernel | NodeKind::Memcpy | NodeKind::Memset)
    }
}

/// A node of a graph, named by its label in errors. Only valid with the
/// graph (and the execs of the graph) that made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Node {
    pub(crate) graph: u64,
    pub(crate) level: u64,
    pub(crate) index: u32,
}

/// A kernel node, typed by the kernel's parameters so that its arguments can
/// be updated in an exec with rustc checking them.
#[derive(Debug)]
pub struct KernelNode<A> {
    pub(crate) node: Node,
    pub(crate) config: LaunchConfig,
    pub(crate) function: sys::CUfunction,
    /// Its kernel refuses overlapping buffers ([`KernelDecl::no_alias`](crate::KernelDecl::no_alias)).
    pub(crate) no_alias: bool,
    pub(crate) _args: PhantomData<fn(A)>,
}

// SAFETY: `function` is an opaque driver handle used only as a value passed
// back to the driver (by the exec that owns the node, under its rules); it
// has no thread affinity. `A` is a marker.
unsafe impl<A> Send for KernelNode<A> {}
// SAFETY: as above; a shared KernelNode is only read.
unsafe impl<A> Sync for KernelNode<A> {}

impl<A> Clone for KernelNode<A> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A> Copy for KernelNode<A> {}

impl Node {
    /// A handle of no graph (graph 0 is never issued): every graph and exec
    /// refuses it. Generated builders fill their node tables with it first.
    pub(crate) const UNSET: Node = Node {
        graph: 0,
        level: 0,
        index: u32::MAX,
    };
}

impl<A> KernelNode<A> {
    /// A handle of no graph, like [`Node::UNSET`].
    pub(crate) const UNSET: KernelNode<A> = KernelNode {
        node: Node::UNSET,
        config: LaunchConfig {
            grid: Dim3 { x: 0, y: 0, z: 0 },
            block: Dim3 { x: 0, y: 0, z: 0 },
            shared_mem_bytes: 0,
        },
        function: std::ptr::null_mut(),
        no_alias: false,
        _args: PhantomData,
    };
}

impl<A: KernelArgs> KernelNode<A> {
    /// The untyped node, for dependencies.
    pub fn node(&self) -> Node {
        self.node
    }

    /// The launch configuration the node was added with.
    pub fn config(&self) -> LaunchConfig {
        self.config
    }
}

/// A kernel node is a node: `Node::from(k)` (or [`KernelNode::node`]) lists
/// it among dependencies. (Not `Deref`: a kernel node is no smart pointer.)
impl<A> From<KernelNode<A>> for Node {
    fn from(kernel: KernelNode<A>) -> Node {
        kernel.node
    }
}

/// The dependency an edge carries (CUDA 12.3+ edge data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EdgeKind {
    /// The downstream node starts after the upstream node completes.
    Full,
    /// Programmatic dependent launch: the downstream kernel may start once
    /// every block of the upstream kernel has triggered
    /// (`griddepcontrol.launch_dependents`) or exited. It must be PDL-aware.
    Programmatic,
    /// Programmatic dependent launch from the launch-order port: the
    /// downstream kernel may start once every block of the upstream kernel
    /// has begun. It must be PDL-aware.
    LaunchOrder,
}

impl EdgeKind {
    /// Whether the edge lets the downstream kernel start early (PDL).
    pub fn is_programmatic(self) -> bool {
        self != EdgeKind::Full
    }

    pub(crate) fn edge_data(self) -> sys::CUgraphEdgeData {
        let (from_port, type_) = match self {
            EdgeKind::Full => (0, 0),
            EdgeKind::Programmatic => (
                sys::CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC as u8,
                sys::CUgraphDependencyType::CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC as u8,
            ),
            EdgeKind::LaunchOrder => (
                sys::CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER as u8,
                sys::CUgraphDependencyType::CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC as u8,
            ),
        };
        sys::CUgraphEdgeData {
            from_port,
            to_port: 0,
            type_,
            reserved: [0; 5],
        }
    }
}

/// What the graph remembers about a node.
#[derive(Debug, Clone)]
pub(crate) struct NodeInfo {
    /// Its label: `Registry::labels[label.0..label.1]`, followed for a
    /// repeated node by its iterations `Registry::label_indices[indices.0
    /// ..indices.1]` (see `Registry::label`).
    pub label: (u32, u32),
    pub indices: (u32, u32),
    pub raw: sys::CUgraphNode,
    pub kind: NodeKind,
    pub level: u64,
    /// Its dependencies' indices: `Registry::dep_list[deps.0..deps.1]`.
    pub deps: (u32, u32),
    /// Graph allocations ordered before (or made by) this node, sorted:
    /// `Registry::alloc_sets[allocs.0..allocs.1]` (see
    /// `Registry::allocs_before`).
    pub allocs: (u32, u32),
    /// The top-level node it runs under: itself, or for a node of a
    /// conditional body, the conditional node at the root level.
    pub top: u32,
    /// The conditional node whose body holds it (`u32::MAX` at the root).
    pub holder: u32,
}

// SAFETY: `raw` is an opaque driver handle used only as a key or passed to
// the driver while the owning graph is borrowed; it carries no thread affinity.
unsafe impl Send for NodeInfo {}
// SAFETY: as above; NodeInfo is never mutated through a shared reference.
unsafe impl Sync for NodeInfo {}
