//! `Exec`: an instantiated graph. Launch, upload, whole-graph update (with
//! its failure explained and a fallback to re-instantiation), per-node
//! parameter updates, enable/disable, and the handle a kernel needs to
//! launch it from the device.
//!
//! An exec is `Send` but not `Sync`, and every call takes `&mut self`: NVIDIA
//! requires calls on one exec to be serialized. Each launch takes part in
//! cudarc's per-slice event tracking for the slices the graph binds.

use crate::buffer::{lock, BoundMut, Buf, ResourceSet, SharedResources};
use crate::error::{
    AllocationState, ArgumentRefusal, DriverResultExt, Foreign, GraphError, Result, Unsupported,
};
use crate::escape::{EscapeState, Escaped, Role};
use crate::fault::HostFaults;
use crate::graph::{with_kernel_params, AllocOrigin, Graph, RawGraph, Registry, SharedRegistry};
pub use crate::handle::DeviceExec;
use crate::handle::RawExec;
use crate::kernel::{ArgEncoder, KernelArgs, LaunchConfig};
use crate::node::{KernelNode, Node};
use crate::ordering::{self, Finished};
use crate::result;
use cudarc::driver::sys::{self, CUgraphExec};
use cudarc::driver::{CudaContext, CudaStream};
use std::marker::PhantomData;
use std::sync::atomic::Ordering;
use std::sync::Arc;

mod instantiate;
use instantiate::escape_roles;
mod node_update;
mod options;
mod update;

pub use node_update::{KernelNodeMut, KernelNodeMutOf, NodeMut};
pub use options::InstantiateOptions;

/// Counts live execs of a graph with memory nodes (at most one may live):
/// one of `RawGraph::live_execs`.
#[derive(Debug)]
pub(super) struct LiveExec(Arc<RawGraph>);

impl Drop for LiveExec {
    fn drop(&mut self) {
        self.0.live_execs.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The allocations an exec's launches make, use or free, with their roles.
type EscapeRoles = Vec<(Arc<EscapeState>, Role)>;

/// An executable graph. It borrows what its graph borrows (`'a`).
pub struct Exec<'a> {
    raw: CUgraphExec,
    /// Owns `raw` (shared with graphs that launch it from the device).
    owned: Arc<RawExec>,
    /// `resources`, as the launching graphs of a device launch track them.
    tracking: Arc<dyn ResourceSet + 'a>,
    /// Every set a launch tracks, in lock order (`ordering::tracked_sets`).
    sets: Vec<Arc<dyn ResourceSet + 'a>>,
    ctx: Arc<CudaContext>,
    /// The graph it was instantiated from: its node handles key per-node
    /// updates, under its guard.
    graph: Arc<RawGraph>,
    /// The source graph's node records as they were at instantiation.
    registry: SharedRegistry,
    /// Graph instances whose node handles this exec accepts: the original
    /// and the graph it was last updated from (same topology). Two, not a
    /// list of every update: a long update loop must not slow per-node calls.
    instances: [u64; 2],
    /// Where the host closures of the graph it was last updated from report
    /// panics (those of the original graph are in `registry`).
    updated_faults: Vec<Arc<HostFaults>>,
    /// The stream of the last launch, kept alive (cudarc tracks slices
    /// across streams only while extra streams exist) and synchronized on
    /// drop: the exec keeps everything its queued work touches borrowed
    /// until that work is done, whatever cudarc's tracking mode.
    last_stream: Option<Arc<CudaStream>>,
    /// The stream of [`Exec::launch_on_own_stream`], made at its first
    /// call. No caller gets it: only the runtime queues work there (the
    /// exec's launches; loans of its graph's buffers, through this exec or
    /// one sharing them; the waits and frees of an allocation a launch
    /// there left live, through its `Escaped`), and nobody can begin a
    /// capture on it.
    own_stream: Option<ordering::OwnStream>,
    /// Its last launch, recorded for the drop when the drop may have to
    /// wait for it on the host (see [`ordering::LastLaunch`]), and room
    /// for a launch's records.
    launches: ordering::Launches,
    resource_id: u64,
    resources: SharedResources<'a>,
    /// Resources that whole-graph updates replaced while a launch that uses
    /// them (their kernels' modules) may still run: dropped once the
    /// stream is seen done.
    retired: Vec<SharedResources<'a>>,
    /// The resources of the graph it was instantiated from, kept after
    /// updates from other graphs: that graph's node handles stay valid for
    /// per-node updates, and their kernels' modules must stay loaded.
    _original: SharedResources<'a>,
    device_launch: bool,
    /// Allocations that outlive a launch: those its alloc nodes make and
    /// nothing frees (unless auto-freed on launch), and those of other
    /// graphs it uses or frees (see `escape`).
    escapes: EscapeRoles,
    _live: Option<LiveExec>,
    _borrows: PhantomData<&'a mut ()>,
}

// SAFETY: an exec is used by one thread at a time (`&mut self` everywhere,
// not Sync); its handle has no thread affinity; the resources it shares are
// Send + Sync behind a Mutex; the node records it shares with its graph
// (`SharedRegistry`) are Send + Sync (asserted in `graph::registry`) and
// only read while shared (a change copies them first).
unsafe impl Send for Exec<'_> {}

impl std::fmt::Debug for Exec<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exec")
            .field("nodes", &self.registry().nodes.len())
            .field("device_launch", &self.device_launch)
            .finish()
    }
}

impl Drop for Exec<'_> {
    fn drop(&mut self) {
        let Some(stream) = self.last_stream.take() else {
            // Never launched: `owned` destroys the handle once no
            // launching graph keeps it.
            return;
        };
        // Allocations the graph does not free (escaped, or left for
        // auto-free-on-launch) are live after the last launch, and the
        // driver does not free them with the exec: `finish` frees them. No
        // safe code can reach them any more (a `Buf` of them is refused by
        // every other graph).
        let leftover = self
            .registry
            .allocs
            .iter()
            .filter(|a| a.node().is_some() && a.freed_by.is_none())
            .map(|a| a.ptr);
        // In the relaxed capture mode: a global or thread-local capture
        // elsewhere must not refuse the waits this drop needs.
        let finished = crate::result::with_relaxed_capture_mode(|| {
            ordering::finish(&self.ctx, &stream, leftover, &self.escapes)
        });
        match finished {
            Finished::Done => {}
            Finished::StillRunning => {
                // The exec's borrows end with this drop (slices, whose
                // frees cudarc orders only through events a stored error
                // disarms; events; host memory): wait for the last launch
                // on the host, through its own event. Everything the exec
                // owns is leaked.
                let _waited = self.launches.last.wait(&stream);
                self.leak_in_flight(stream)
            }
        }
    }
}

impl Exec<'_> {
    /// Drop's way out when it cannot wait for the last launch: leaves
    /// everything that launch may use as a `mem::forget` of the exec would
    /// (`mem::forget` is safe: see the crate docs). The stream stays alive,
    /// so cudarc keeps ordering the bound slices' frees and later uses
    /// after the events the launch recorded; the exec, its graph-memory
    /// allocations, child and device-target resources and the live-exec
    /// slot are never released.
    fn leak_in_flight(&mut self, stream: Arc<CudaStream>) {
        std::mem::forget(stream);
        std::mem::forget(self.owned.clone());
        std::mem::forget(self.resources.clone());
        std::mem::forget(self._original.clone());
        std::mem::forget(self.tracking.clone());
        std::mem::forget(std::mem::take(&mut self.retired));
        std::mem::forget(std::mem::take(&mut self.escapes));
        std::mem::forget(self._live.take());
    }
}

/// What [`Exec::update_or_reinstantiate`] did.
#[derive(Debug)]
#[non_exhaustive]
pub enum UpdateOutcome {
    /// The exec was updated in place.
    Updated,
    /// The update was refused for `reason`; the exec was instantiated anew.
    Reinstantiated { reason: GraphError },
}

impl<'a> Exec<'a> {
    /// Launches the exec on `stream`. The stream first waits for pending
    /// cudarc work on the bound slices; the launch is recorded as their
    /// latest use, so later cudarc work on any stream (and their frees) waits
    /// for it.
    ///
    /// The exec keeps `stream` alive, and its drop waits for the last launch.
    ///
    /// A host node's closure that panicked in an earlier launch is reported
    /// here ([`GraphError::HostPanicked`], naming the node), instead of
    /// launching; the next call launches.
    ///
    /// # Errors
    /// [`GraphError::HostPanicked`] as said above;
    /// [`GraphError::ForeignHandle`] for a stream of another context;
    /// [`GraphError::StreamRefused`] for the per-thread default stream or a
    /// capturing stream; [`GraphError::AllocationRefused`] while an
    /// allocation the exec made is held elsewhere, or one it uses is freed;
    /// [`GraphError::Driver`] when the driver refuses the
    /// launch.
    pub fn launch(&mut self, stream: &Arc<CudaStream>) -> Result<()> {
        self.take_host_fault()?;
        ordering::check_stream(&self.ctx, stream, "launch")?;
        self.launches.last.prepare(&self.ctx)?;
        self.launch_checked(stream, None)
    }

    /// Steps 2 to 7 of the protocol (see `ordering`) for a launch on
    /// `stream` (`own`: the exec's own, with its flag), which step 1
    /// checked.
    #[inline] // two callers, both on launch loops' paths
    fn launch_checked(
        &mut self,
        stream: &Arc<CudaStream>,
        own: Option<&Arc<std::sync::atomic::AtomicBool>>,
    ) -> Result<()> {
        let guard = ordering::prepare(
            (&self.resources, &self.sets),
            &self.escapes,
            (stream, own),
            &mut self.launches,
        )?;
        // SAFETY: the exec and stream are live; everything the exec
        // references is borrowed for 'a or owned by user objects, and stays
        // so until the work queued here is done (see Drop); the allocations
        // of other graphs it uses are live, and every bound slice's pending
        // work is waited for (`prepare`).
        let launched = unsafe { result::launch(self.raw, stream.cu_stream()) }.op("cuGraphLaunch");
        // Launches of one exec run in order, so waiting for the last one
        // that was queued waits for them all. Noted as soon as the launch
        // is queued, before the records after it, so that Drop waits.
        if launched.is_ok()
            && !self
                .last_stream
                .as_ref()
                .is_some_and(|last| Arc::ptr_eq(last, stream))
        {
            self.last_stream = Some(stream.clone());
        }
        let recorded = guard.commit(launched.is_ok());
        let noted = match (launched.is_ok(), own.is_some()) {
            (true, false) => self.launches.last.launched(stream),
            (true, true) => {
                self.launches.last.defer();
                Ok(())
            }
            (false, _) => Ok(()),
        };
        // The first failure: the launch's, then a record's.
        launched?;
        recorded?;
        noted
    }

    /// Launches the exec as [`Exec::launch`] does, on a stream of the
    /// exec's own (made at the first call; no caller gets it). Only the
    /// runtime queues work there, and nobody can begin a capture on it, so
    /// a graph-owned buffer's loan after it ([`Exec::buffer`]) copies on
    /// that stream directly, as a C++ program copies on its launch stream,
    /// instead of on the
    /// runtime's copy stream behind an event recorded on the launch stream
    /// (about a microsecond per copy on the H200). It helps those reads
    /// only: a bound slice read with cudarc ([`Exec::bound_mut`]) costs
    /// the same after either launch. Each exec makes its own stream, at the
    /// first call, and nothing hands it out: work on your streams follows a
    /// launch there through cudarc's events for bound slices, or after a
    /// host wait ([`Exec::synchronize`], a loan). Launches here and on
    /// your streams ([`Exec::launch`]) may be mixed on one exec: each is
    /// ordered after the one before.
    ///
    /// # Errors
    /// As [`Exec::launch`]; [`GraphError::Driver`] when the stream cannot
    /// be made.
    pub fn launch_on_own_stream(&mut self) -> Result<()> {
        self.take_host_fault()?;
        let mut own = match self.own_stream.take() {
            Some(own) => own,
            None => ordering::OwnStream::new(&self.ctx)?,
        };
        let launched = own
            .check(&self.ctx)
            .and_then(|()| self.launch_checked(own.stream(), Some(own.uncaptured())));
        if launched.is_ok() {
            own.launched();
        }
        self.own_stream = Some(own);
        launched
    }

    /// Waits for the exec's last launch. An error the GPU hit in it (a
    /// kernel that trapped or faulted) is returned as the driver's error,
    /// without a node label: the driver does not say which node failed.
    /// Such an error is sticky: the context, and everything made in it, is
    /// unusable from then on (every later call fails); drop them all and
    /// make a new context (the primary context is reset when its last
    /// holder is dropped). A host node's panic in the launch is returned as
    /// [`GraphError::HostPanicked`], naming the node.
    ///
    /// # Errors
    /// [`GraphError::Driver`] for an error of the launched work
    /// (a kernel that faulted: the context is then unusable, see the crate docs);
    /// [`GraphError::HostPanicked`] as said above.
    pub fn synchronize(&mut self) -> Result<()> {
        self.wait_for_last_launch()?;
        self.retired.clear();
        self.take_host_fault()
    }

    fn take_host_fault(&self) -> Result<()> {
        self.registry.take_host_fault()?;
        self.updated_faults.iter().try_for_each(|f| f.take())
    }

    /// The graph (root instance) the exec was instantiated from.
    pub(crate) fn original_graph(&self) -> u64 {
        self.instances[0]
    }

    /// How many host buffers that graph had when the exec was instantiated.
    pub(crate) fn host_buffers(&self) -> usize {
        self.registry.host_buffers()
    }

    /// Waits for the exec's last launch, if any.
    pub(crate) fn wait_for_last_launch(&self) -> Result<()> {
        ordering::wait(self.last_stream.as_ref())
    }

    /// The graph's resources (what its nodes reference) and their identity.
    pub(crate) fn resources(&self) -> (&SharedResources<'a>, u64) {
        (&self.resources, self.resource_id)
    }

    /// Every set a launch tracks changed (an update, a new device target).
    pub(super) fn refresh_sets(&mut self) {
        self.sets = ordering::tracked_sets(&self.tracking);
    }

    /// Uploads the exec's resources ahead of the first launch.
    ///
    /// # Errors
    /// [`GraphError::ForeignHandle`] for a stream of another context;
    /// [`GraphError::StreamRefused`] for the per-thread default stream or a
    /// capturing stream;
    /// [`GraphError::Driver`] when the upload fails.
    pub fn upload(&mut self, stream: &CudaStream) -> Result<()> {
        ordering::check_stream(&self.ctx, stream, "upload")?;
        // SAFETY: the exec and stream are live.
        unsafe { result::upload(self.raw, stream.cu_stream()) }.op("cuGraphUpload")
    }

    /// Takes the allocation behind `buf` that the last launch made and
    /// nothing in the graph frees (an `#[escape]` alloc node, or any alloc
    /// node without a free node, instantiated without auto-free-on-launch):
    /// an owned [`Escaped`] to read, write, hand to another graph
    /// ([`Graph::bind_escaped`], which may free it with a free node) or
    /// drop (which frees it). Until it is freed, the exec does not launch
    /// again; an allocation not taken is freed by the next launch or the
    /// exec's drop. `buf` is the alloc node's buffer, or a prefix of it.
    ///
    /// # Errors
    /// [`GraphError::ForeignHandle`] for a buffer that is not an allocation
    /// this exec makes and leaves live; [`GraphError::AllocationRefused`]
    /// before a launch made it, or once it was taken.
    pub fn take_escaped<T>(&mut self, buf: Buf<'a, T>) -> Result<Escaped<T>> {
        let not_ours = || GraphError::foreign(Foreign::NotEscaping, None, "Exec::take_escaped");
        let alloc = buf.as_use(false).alloc.ok_or_else(not_ours)?;
        let info = self
            .registry
            .allocs
            .get(alloc.index as usize)
            .filter(|info| alloc.graph == self.original_graph() && info.node().is_some())
            .ok_or_else(not_ours)?;
        if info.ptr != buf.device_ptr() {
            return Err(not_ours());
        }
        let (state, _) = self
            .escapes
            .iter()
            .find(|(state, role)| *role == Role::Make && state.ptr == info.ptr)
            .ok_or_else(not_ours)?;
        let stream = self
            .last_stream
            .clone()
            .ok_or_else(|| GraphError::AllocationRefused {
                operation: "take_escaped",
                label: state.label.clone(),
                state: AllocationState::NotMade,
            })?;
        let generation = state.hand_out()?;
        Ok(Escaped::new(state.clone(), stream, buf.len(), generation))
    }

    /// The handle a kernel uses to launch this exec from the device. The
    /// exec must be instantiated with `device_launch` and uploaded. It waits
    /// for the exec's last launch from the host first: an exec must not run
    /// twice at once, and nothing would order a launch from the device
    /// after it (while the handle lives, the exec is borrowed and cannot be
    /// launched from the host).
    ///
    /// # Errors
    /// [`GraphError::Unsupported`] for an exec not
    /// instantiated with `device_launch`, or one whose graph uses another graph's
    /// allocation; what [`Exec::synchronize`] returns for the wait.
    pub fn device_handle(&self) -> Result<DeviceExec<'_>> {
        if !self.device_launch {
            return Err(GraphError::unsupported(
                "device_handle",
                None,
                Unsupported::NotDeviceLaunchable,
            ));
        }
        if let Some((state, _)) = self.escapes.iter().find(|(_, role)| *role != Role::Make) {
            return Err(GraphError::unsupported(
                "device_handle",
                Some(&state.label),
                Unsupported::OtherGraphsAllocationInDeviceLaunch,
            ));
        }
        self.wait_for_last_launch()?;
        Ok(DeviceExec::new(
            self.raw as u64,
            &self.owned,
            &self.tracking,
        ))
    }

    /// The slice bound with `bind_mut` behind `buf`, between launches: read
    /// a residual or a flag, write new input, then launch again, while the
    /// exec lives (see [`BoundMut`]). With cudarc's event tracking on (the
    /// default), cudarc orders that work after this exec's launches.
    ///
    /// ```no_run
    /// # use graph_runtime::{kernel::KernelDef, Graph, LaunchConfig};
    /// # use graph_runtime::__doc_kernels as kernels;
    /// # fn main() -> graph_runtime::Result<()> {
    /// let ctx = graph_runtime::driver::context(0)?;
    /// let (stream, reader) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    /// let mut x = stream.alloc_zeros::<f32>(1024).unwrap();
    /// let mut graph = Graph::new(&ctx)?;
    /// let xb = graph.bind_mut(&mut x);
    /// let bump = kernels::AddOne::load(&ctx)?;
    /// graph.add_kernel("bump", &bump, LaunchConfig::for_elements(1024, 256), (xb, 1024), &[])?;
    /// let mut exec = graph.instantiate()?;
    /// loop {
    ///     exec.launch(&stream)?;
    ///     // Read element 0 on another stream: ordered after the launch.
    ///     let head = exec.bound_mut(xb.slice(0..1))?;
    ///     if reader.clone_dtoh(&head.view()).unwrap()[0] >= 10.0 {
    ///         break;
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`GraphError::ForeignHandle`] if `buf` is not a slice this exec's
    /// graph bound with `bind_mut` (a graph allocation, a read-only binding,
    /// a child graph's binding, another graph's buffer);
    /// [`GraphError::BufferLent`] while a `BoundMut` of another exec that
    /// shares the graph's bindings lives.
    pub fn bound_mut<T: 'static>(&mut self, buf: Buf<'a, T>) -> Result<BoundMut<'_, 'a, T>> {
        let foreign = || GraphError::foreign(Foreign::NotBoundMut, None, "Exec::bound_mut");
        if buf.as_use(false).root != self.resource_id || buf.as_use(false).alloc.is_some() {
            return Err(foreign());
        }
        match BoundMut::find(&self.resources, &buf) {
            Ok(found) => found.ok_or_else(foreign),
            Err(()) => Err(GraphError::BufferLent {
                operation: "bound_mut",
            }),
        }
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

    /// The labels of the exec's nodes, in the order they were added.
    pub fn labels(&self) -> Vec<String> {
        self.registry().labels()
    }

    /// The raw handle, for calls the runtime does not wrap.
    pub fn cu_graph_exec(&self) -> CUgraphExec {
        self.raw
    }
}
