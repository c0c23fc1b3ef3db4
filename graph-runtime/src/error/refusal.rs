//! Why the runtime refused a call before the driver saw it: one enum per
//! class of [`GraphError`](super::GraphError) refusal, so that a program
//! (and a test) matches on what went wrong instead of on message text.

/// Two nodes are not ordered the way a rule needs
/// ([`GraphError::Unordered`](super::GraphError::Unordered)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OrderRule {
    /// Both set one conditional handle, and nothing orders them (CUDA
    /// leaves concurrent sets of one handle undefined).
    #[error(
        "sets a conditional handle that `{other}` also sets, and the two are not ordered; \
         add an edge between them (CUDA leaves concurrent sets of one handle undefined)"
    )]
    HandleSetters { other: String },
    /// Sets a conditional handle that a conditional node reads (or reads
    /// one a node sets), and nothing orders them: the read may see either
    /// value, or none set yet.
    #[error(
        "and `{other}` set and read one conditional handle, and the two are not ordered; add an \
         edge between them (a setter before the conditional node sets it for that launch), or \
         set it inside the conditional node's body"
    )]
    HandleSetAndRead { other: String },
    /// Both use one host buffer, one of them writing, unordered.
    #[error(
        "uses a host buffer that `{other}` also uses, one of them writing, and the two are \
         not ordered; add an edge between them"
    )]
    HostBuffer { other: String },
    /// Uses a graph allocation without being ordered after its alloc node.
    #[error(
        "uses the allocation of `{allocation}` but is not ordered after it; add `{allocation}` \
         to its dependencies"
    )]
    UseBeforeAlloc { allocation: String },
    /// Uses a graph allocation after (or not ordered before) its free node.
    #[error(
        "uses the allocation of `{allocation}`, which `{free}` may already have freed (it is \
         not ordered before the free)"
    )]
    UseAfterFree { allocation: String, free: String },
    /// Two iterations of a `#[disjoint]` block touch the same memory, one
    /// of them writing, and nothing orders them.
    #[error(
        "touches memory that `{other}`, of another iteration of `{block}`, touches too, one of \
         them writing; `{block}` is `#[disjoint(..)]`, but its iterations are not: give each \
         its own part (slice by the loop variable), or order them (`a[i-1] -> a`)"
    )]
    DisjointIterationsOverlap { other: String, block: String },
    /// A free node not ordered after a node that uses the allocation.
    #[error(
        "frees `{allocation}` while `{user}` may still use it; make `{user}` a dependency of \
         the free node"
    )]
    FreeWhileUsed { allocation: String, user: String },
    /// A second free node for one allocation.
    #[error("frees `{allocation}`, which is already freed by `{first}`")]
    DoubleFree { allocation: String, first: String },
}

/// What an operation does not support
/// ([`GraphError::Unsupported`](super::GraphError::Unsupported)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unsupported {
    /// A conditional body is part of its graph: it is instantiated,
    /// updated, cloned and profiled with it.
    #[error("a conditional body is not a whole graph; use the graph that holds it")]
    ConditionalBody,
    /// A graph launched from the device copies device memory only.
    #[error(
        "a graph launched from the device copies device memory only (it has a copy of host memory)"
    )]
    HostCopyInDeviceLaunch,
    /// `device_handle` on an exec not instantiated for device launches.
    #[error("instantiate with `InstantiateOptions::new().device_launch(true)` to launch from the device")]
    NotDeviceLaunchable,
    /// A graph that uses another graph's allocation is launched from the
    /// host only (nothing could order a device launch after the one that
    /// makes it).
    #[error(
        "a graph that uses an allocation of another graph cannot be launched from the device \
         (its launches could not be ordered after the one that makes it)"
    )]
    OtherGraphsAllocationInDeviceLaunch,
    /// A graph launched from the device cannot hold profiling's records.
    #[error("a graph launched from the device cannot hold the profiling's event records")]
    ProfileOfDeviceLaunch,
    /// CUDA cannot remove profiling's records from a graph with memory
    /// nodes (cuGraphDestroyNode refuses in such graphs).
    #[error(
        "a graph with memory nodes cannot be profiled: CUDA cannot remove the profiling's \
         event records from it again (cuGraphDestroyNode refuses in such graphs); profile a \
         variant whose buffers are bound slices"
    )]
    ProfileWithMemoryNodes,
    /// A conditional body as a child graph.
    #[error("a conditional body cannot be a child graph")]
    BodyAsChild,
    /// A graph with host buffers as a child graph.
    #[error("a graph with host buffers cannot be a child graph; add its nodes to this graph")]
    HostBuffersInChild,
    /// A graph with conditional nodes as a child graph.
    #[error(
        "a graph with conditional nodes cannot be a child graph (CUDA refuses it); add its nodes \
         to this graph, or place a fragment"
    )]
    ConditionalInChild,
    /// A graph that made conditional handles as a child graph.
    #[error(
        "a graph that makes conditional handles cannot be a child graph (its kernels would set \
         handles of a graph the driver only copies, unordered between copies); add its nodes to \
         this graph, or place a fragment"
    )]
    ConditionalHandleInChild,
    /// A graph that binds another graph's allocation as a child graph.
    #[error(
        "a graph that binds an allocation of another graph (`bind_escaped`) cannot be a child \
         graph; bind it in this graph instead"
    )]
    EscapedInChild,
    /// A child graph that copies host memory, in a conditional body.
    #[error("a child graph that copies host memory cannot be in a conditional body (bodies copy device memory only)")]
    HostCopyChildInBody,
    /// A copy of host memory in a conditional body.
    #[error("copies host memory inside a conditional body, which copies device memory only")]
    HostCopyInBody,
    /// Graph memory nodes in a conditional body.
    #[error("graph memory nodes cannot be inside a conditional body")]
    MemoryNodeInBody,
    /// A copy of page-locked, registered or managed host memory: the
    /// graph cannot keep it alive until an asynchronous copy is done.
    #[error(
        "copies page-locked, registered or managed host memory, which a launch copies \
         asynchronously and the graph cannot keep alive until the copy is done; copy from or \
         into pageable memory (a Vec or slice) or a device buffer"
    )]
    PinnedHostCopy,
    /// A switch without arms.
    #[error("a switch needs at least one arm")]
    EmptySwitch,
    /// A kernel after a programmatic edge that is not declared PDL-aware.
    #[error(
        "kernel `{kernel}` follows a programmatic dependent launch edge but is not declared \
         PDL-aware (`KernelDecl::pdl_aware`): it could start before its predecessor finishes"
    )]
    NotPdlAware { kernel: String },
    /// A dependency in another graph level (a conditional body is a
    /// graph of its own).
    #[error(
        "dependency `{dependency}` is in another graph level (a conditional body is its own graph)"
    )]
    DependencyInOtherLevel { dependency: String },
    /// Two `rebuild` arguments that overlap where the graph writes one:
    /// the macro's race check, made on distinct parameters, would not hold.
    #[error(
        "`{first}` and `{second}` overlap, and the graph writes one of them: the macro's race \
         check took them for distinct buffers; pass buffers that do not overlap"
    )]
    OverlappingRebuildBuffers { first: String, second: String },
    /// A node past what a graph's records hold (its index, its label's
    /// bytes or its dependencies would not fit their `u32` positions).
    #[error(
        "the graph is full: a graph holds at most {most} nodes, {most} bytes of labels and \
         {most} dependencies"
    )]
    GraphFull { most: usize },
    /// A free node given a buffer that is not a graph allocation.
    #[error("only graph allocations can be freed by a free node")]
    FreeOfBoundBuffer,
    /// A free node given part of an allocation.
    #[error("frees part of `{allocation}`; free the whole allocation")]
    PartialFree { allocation: String },
    /// Captured work with graph memory nodes (cudaMallocAsync).
    #[error(
        "the captured work allocates or frees graph memory (a captured cudaMallocAsync or \
         cudaFreeAsync becomes a memory node, which a child graph node may not hold); allocate \
         outside the capture: a bound slice, or an `alloc` node ordered before this one (a \
         library that allocates scratch memory while captured takes a buffer for it instead: \
         cuBLAS through cublasSetWorkspace)"
    )]
    CapturedMemoryNode,
    /// Captured work, in a conditional body, with a node kind a body may
    /// not hold.
    #[error(
        "the captured work holds {what}, which a conditional body may not hold (only kernel, \
         copy of device memory, fill, empty, child graph and conditional nodes)"
    )]
    CapturedInBody { what: &'static str },
    /// A host buffer added after the exec was instantiated.
    #[error(
        "the host buffer was added to the graph after this exec was instantiated; use an exec \
         instantiated since"
    )]
    HostBufferAfterInstantiation,
    /// A `cuda_graph!` conditional body whose closure did not build it.
    #[error("its conditional body was not built")]
    BodyNotBuilt,
}

/// Why a stream cannot take an operation
/// ([`GraphError::StreamRefused`](super::GraphError::StreamRefused)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamRefusal {
    /// A capturing stream records work instead of running it: an exec
    /// launched there would run when (and if) the captured graph runs.
    #[error(
        "the stream is capturing (a capture began on it and has not ended): an exec runs only \
         on a stream that runs work"
    )]
    Capturing,
    /// The per-thread default stream names another stream on every
    /// thread, so a `Send` exec could not wait for its launch.
    #[error(
        "the per-thread default stream names another stream on every thread; launch on a \
         stream of the context (`ctx.new_stream()`)"
    )]
    PerThreadDefault,
    /// Waiting for a bound slice's pending work drew the stream into a
    /// capture: another thread last used the slice in a capture still
    /// open (cudarc recorded the slice's event there). The stream stays in
    /// that capture until it ends; launches on it are refused meanwhile.
    #[error(
        "waiting for a bound buffer's last use drew the stream into a capture (the buffer was \
         last used in a capture another thread has not ended): the launch would be recorded \
         there, not run"
    )]
    JoinedCapture,
}

/// The state of a graph allocation that outlives a launch (`#[escape]`)
/// that an operation cannot work with
/// ([`GraphError::AllocationRefused`](super::GraphError::AllocationRefused)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AllocationState {
    /// No launch made it yet, or it was freed since.
    #[error(
        "no launch has made the allocation since it was last freed: launch the exec first \
         (each launch makes one)"
    )]
    NotMade,
    /// Taken since the last launch.
    #[error("the allocation was already taken since the last launch")]
    AlreadyTaken,
    /// The last launch's allocation was taken and is still live: the exec
    /// launches again once it is freed.
    #[error(
        "the allocation of the last launch was taken and is still live: free it (drop its \
         `Escaped`, or launch the graph that frees it) before launching again"
    )]
    TakenAndLive,
    /// An `Escaped` the caller holds still refers to it: no graph may
    /// free it meanwhile.
    #[error(
        "the allocation made by another graph is held by an `Escaped` the caller still has: \
         bind it to a graph (`bind_escaped`) or drop it before launching a graph that frees it"
    )]
    HeldByCaller,
    /// Freed since the launch that made it.
    #[error(
        "an allocation made by another graph was freed since it was made: launch the graph \
         that makes it again first"
    )]
    FreedSinceMade,
    /// A graph bound an allocation its own alloc node makes.
    #[error("the graph binds an allocation that it makes itself; use its alloc node's buffer")]
    BoundByItsMaker,
    /// A use of it could not be waited for (a capture another thread
    /// began refused the wait, or took the record of its last use): it is
    /// kept for good, never freed, and nothing may use or make it again.
    #[error(
        "a use of the allocation could not be waited for (a capture another thread began \
         refused the wait, or took the record of its last use): it is kept for good, and no \
         copy or launch may use it"
    )]
    Stuck,
}

/// Why a per-node update was refused
/// ([`GraphError::NodeUpdateRefused`](super::GraphError::NodeUpdateRefused)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NodeUpdateRefusal {
    /// A kernel may go on setting the conditional handles it was built
    /// with, and no others.
    #[error("it may set only the conditional handles it was built with")]
    OtherConditionalHandles,
    /// Only kernel, copy and fill nodes can be enabled or disabled.
    #[error("only kernel, copy and fill nodes can be enabled or disabled")]
    NotToggleable,
    /// Disabling a kernel after a programmatic or launch-order edge: it
    /// completes after the kernel before the edge only by waiting for it.
    #[error(
        "it follows a programmatic dependent launch edge: disabled, it would not wait for the \
         kernel before it, and the nodes after it could run while that kernel does"
    )]
    FollowsProgrammaticEdge,
    /// In a `cuda_graph!` graph, whose races the macro checked on the
    /// arguments as written, an update may narrow the memory a kernel node
    /// uses, not reach other memory (another lane's part, another buffer).
    #[error(
        "it would touch memory it was not built with, which the macro's race check did not \
         cover (an update may use part of what the node used, or read where it wrote): build \
         the graph again with `rebuild` and update the exec with it"
    )]
    OtherMemory,
}

/// Why a declared kernel's launch on a stream was refused
/// ([`GraphError::LaunchRefused`](super::GraphError::LaunchRefused)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchRefusal {
    /// The arguments or the launch configuration fail the checks a
    /// kernel node makes.
    #[error("{0}")]
    Arguments(super::ArgumentRefusal),
    /// A buffer argument not bound by this launch (a graph's, another
    /// launch's, or of another context or `CudaContext` value).
    #[error(
        "buffer argument {argument} was not bound by this launch (it is a graph's, another \
         launch's, or of another context or `CudaContext` value than the stream's): bind it \
         with `bind` or `bind_mut`"
    )]
    NotBound { argument: usize },
    /// A buffer bound read-only passed where the kernel writes.
    #[error(
        "buffer argument {argument} is bound read-only (`bind`) but the kernel writes it: bind \
         it with `bind_mut`"
    )]
    ReadOnly { argument: usize },
    /// A conditional handle or exec argument: those are for graph nodes.
    #[error("a conditional handle or an exec is an argument of a graph's kernel node only")]
    GraphOnlyArgument,
    /// The kernel was loaded in another context than the stream's.
    #[error("the kernel was loaded in another context than the stream's")]
    KernelOfOtherContext,
    /// The stream is capturing: cudarc's tracking events cannot order a
    /// captured launch.
    #[error(
        "the stream is capturing: cudarc's tracking events cannot order a captured launch (add \
         the kernel to a graph instead)"
    )]
    Capturing,
    /// Waiting for a bound slice's pending work drew the stream into a
    /// capture another thread has not ended (the slice was last used in
    /// it): the kernel would be recorded there, not run.
    #[error(
        "waiting for a bound buffer's last use drew the stream into a capture another thread \
         has not ended: the kernel would be recorded there, not run"
    )]
    JoinedCapture,
    /// A bound buffer lives on the per-thread default stream: cudarc frees
    /// it on the per-thread stream of whichever thread drops it, which the
    /// launch cannot order after the kernel.
    #[error(
        "a bound buffer was allocated on the per-thread default stream, where cudarc frees it on \
         whichever thread drops it: allocate it on a stream of the context (`ctx.new_stream()`)"
    )]
    PerThreadBuffer,
    /// A bound buffer's own stream (where cudarc frees it) captures, or
    /// refuses work while another stream captures (the legacy stream): the
    /// launch could not make that stream follow the kernel, so the
    /// buffer's free would not wait for it.
    #[error(
        "a bound buffer's own stream (where cudarc frees it) is capturing, or refuses work while \
         another stream captures: the launch could not order the buffer's free after the kernel"
    )]
    BufferStreamCapturing,
}

/// What a call was given that is another graph's, exec's or context's
/// ([`GraphError::ForeignHandle`](super::GraphError::ForeignHandle)).
/// `Display` names it; [`Foreign::hint`] says what would do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Foreign {
    /// A node of another graph (or exec).
    #[error("a node")]
    Node,
    /// A dependency of another graph, or of none.
    #[error("a dependency")]
    Dependency,
    /// A buffer bound by another graph (or launch), or of no graph.
    #[error("a buffer")]
    Buffer,
    /// An allocation another graph makes, or one it does not know.
    #[error("an allocation")]
    Allocation,
    /// A conditional handle of another graph.
    #[error("the conditional handle")]
    ConditionalHandle,
    /// A conditional handle of a level of this graph that does not hold
    /// the conditional node (a sibling body's): CUDA lets a handle drive a
    /// conditional node of the graph it was made on or of a body inside it.
    #[error("the conditional handle")]
    ConditionalHandleOfOtherLevel,
    /// A host buffer of another graph.
    #[error("the host buffer")]
    HostBuffer,
    /// A clone's host buffer whose memory has another type.
    #[error("the host buffer")]
    HostBufferOfOtherType,
    /// An event of another context.
    #[error("the event")]
    Event,
    /// A kernel loaded in another context than the graph's: the driver
    /// runs a kernel node in its function's context, where the graph's
    /// buffers are not.
    #[error("the kernel")]
    Kernel,
    /// A child graph of another context, or of another `CudaContext`
    /// value.
    #[error("the child graph")]
    ChildGraph,
    /// A device exec of another context, or of another `CudaContext`
    /// value.
    #[error("the device exec")]
    DeviceExec,
    /// A stream of another context, or of another `CudaContext` value of
    /// the exec's.
    #[error("the stream")]
    Stream,
    /// A stream of another context than the graph's (a capture's).
    #[error("the stream")]
    StreamOfOtherContext,
    /// A buffer `Exec::take_escaped` cannot take: it must be an
    /// allocation the exec makes and leaves live.
    #[error("the buffer")]
    NotEscaping,
    /// A buffer `Exec::bound_mut` cannot lend: it must be a slice the
    /// exec's graph bound with `bind_mut`.
    #[error("the buffer")]
    NotBoundMut,
    /// A buffer `Exec::buffer` cannot lend: it must be a buffer the
    /// exec's graph owns (`Graph::add_buffer`).
    #[error("the buffer")]
    NotOwned,
}

impl Foreign {
    /// What the call takes instead, where more than "this graph's" helps
    /// (empty, or a parenthesis with a leading space).
    pub fn hint(&self) -> &'static str {
        match self {
            Foreign::ConditionalHandleOfOtherLevel => {
                " (create the handle on the graph that holds the conditional node, or on one \
                 that holds it through conditional bodies)"
            }
            Foreign::HostBufferOfOtherType => " (its memory has another type)",
            Foreign::Event | Foreign::StreamOfOtherContext => " (it is of another context)",
            Foreign::Kernel => {
                " (it was loaded in another context: load it in the graph's, \
                 `K::load(graph.context())`)"
            }
            Foreign::ChildGraph | Foreign::DeviceExec => {
                " (it is of another context, or of another `CudaContext` value of the graph's)"
            }
            Foreign::Stream => {
                " (it is of another context, or of another `CudaContext` value of the exec's: \
                 clone one `Arc<CudaContext>`)"
            }
            Foreign::NotEscaping => {
                " (it must be an allocation this exec makes and leaves live: an alloc node of \
                 its graph without a free node, and no auto-free-on-launch, from its start)"
            }
            Foreign::NotBoundMut => " (it must be a slice this exec's graph bound with `bind_mut`)",
            Foreign::NotOwned => {
                " (it must be a buffer this exec's graph owns: `Graph::add_buffer`)"
            }
            Foreign::Node
            | Foreign::Dependency
            | Foreign::Buffer
            | Foreign::Allocation
            | Foreign::ConditionalHandle
            | Foreign::HostBuffer => "",
        }
    }
}
