//! The owned `CUgraph` a graph, its bodies and its execs share.

use super::*;

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
    /// Live execs of a graph with memory nodes or host buffers, of which
    /// at most one may live (see `Exec`'s one-exec slot).
    pub live_execs: AtomicUsize,
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
            live_execs: AtomicUsize::new(0),
        }
    }

    /// Enters the graph for a driver call: refused if it is poisoned; holds
    /// the guard while execs share it.
    #[inline]
    pub fn enter(&self) -> Result<Option<Ranked<MutexGuard<'_, ()>>>> {
        self.enter_as(Rank::Graph)
    }

    /// As `enter`, for a graph being added as a child of another (its
    /// guard comes before the parent's: see `ranks`).
    pub fn enter_as_child(&self) -> Result<Option<Ranked<MutexGuard<'_, ()>>>> {
        self.enter_as(Rank::ChildGraph)
    }

    fn enter_as(&self, rank: Rank) -> Result<Option<Ranked<MutexGuard<'_, ()>>>> {
        if self.poisoned.load(Ordering::Acquire) {
            return Err(GraphError::Poisoned);
        }
        Ok(self
            .has_execs
            .load(Ordering::Acquire)
            .then(|| ranks::lock(rank, &self.guard)))
    }

    /// Refused if poisoned (without taking the guard).
    pub fn check_poisoned(&self) -> Result<()> {
        match self.poisoned.load(Ordering::Acquire) {
            true => Err(GraphError::Poisoned),
            false => Ok(()),
        }
    }

    /// The guard, unconditionally (execs use it for per-node calls).
    pub fn lock(&self) -> Ranked<MutexGuard<'_, ()>> {
        ranks::lock(Rank::Graph, &self.guard)
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
        // SAFETY: we own the graph and nothing uses it after this.
        // A failure (only for an invalid handle, which ownership rules out)
        // cannot be returned from Drop: it is kept in the context.
        result::release_in_drop(&self.ctx, || unsafe { result::graph_destroy(self.raw) });
    }
}
