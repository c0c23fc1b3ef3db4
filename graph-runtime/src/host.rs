//! Host memory a graph owns ([`HostBuf`]): copy nodes bring device data
//! into it or send it to the device, host nodes read or write it in the
//! graph, and the program reads or writes it through the exec between
//! launches. All in safe code:
//!
//! - The memory is page-locked, owned by the graph through a user object,
//!   so it lives until the last exec's work is done, also when an exec is
//!   forgotten (borrowed page-locked memory is refused in copy nodes for
//!   that reason). Copies then read and write it when they run.
//! - Every two nodes that use one buffer, one of them writing, must be
//!   ordered (as for the setters of a conditional handle); so a host node
//!   never reads what a copy node is still writing.
//! - A graph with host buffers has one live exec (two could run at once
//!   and write the same memory), is not updated from another graph, and
//!   its exec waits for its last launch before handing the buffer out.
//! - A clone ([`Graph::try_clone`]) gets host memory of its own (zeroed):
//!   its copy nodes and host nodes are pointed at it, so it has a live
//!   exec of its own; [`Graph::host_buffer`] gives its handles.

use crate::error::{DriverResultExt, GraphError, OrderRule, Result, Unsupported};
use crate::exec::Exec;
use crate::graph::Graph;
use crate::graph::{HostMemory, HostNodeMaker};
use crate::node::Node;
use bytemuck::Pod;
use cudarc::driver::CudaContext;
use std::any::Any;
use std::sync::Arc;

impl<T: Pod + Send + Sync> HostMemory for HostStorage<T> {
    fn fresh(&self, ctx: &Arc<CudaContext>) -> Result<Arc<dyn HostMemory>> {
        Ok(Arc::new(HostStorage::<T>::new(ctx, self.len)?))
    }
    fn ptr(&self) -> *mut std::ffi::c_void {
        self.data.as_ptr().cast()
    }
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

/// A host node's closure over a buffer it reads, shared by the node and
/// the clones made of it.
type ReadFn<T> = Arc<dyn Fn(&[T]) + Send + Sync>;
/// Likewise, for a buffer it writes.
type WriteFn<T> = Arc<dyn Fn(&mut [T]) + Send + Sync>;

/// A graph-owned host buffer of `T`. Cheap to clone (a handle).
pub struct HostBuf<T> {
    storage: Arc<HostStorage<T>>,
    /// The graph (root instance) that owns it.
    graph: u64,
    /// How many host buffers the graph had once this one was added: an
    /// exec instantiated before then has fewer, and no claim on it.
    ordinal: usize,
    id: u64,
}

impl<T> Clone for HostBuf<T> {
    fn clone(&self) -> Self {
        HostBuf {
            storage: self.storage.clone(),
            graph: self.graph,
            ordinal: self.ordinal,
            id: self.id,
        }
    }
}

impl<T> std::fmt::Debug for HostBuf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuf")
            .field("len", &self.len())
            .field("graph", &self.graph)
            .finish()
    }
}

/// The memory, shared by the buffer's handles, the host nodes' closures and
/// the user object that keeps it alive for the driver: page-locked, so that
/// a copy node reads or writes it when the node runs (a pageable copy reads
/// its source when the launch call is made, before any host node of that
/// launch has run). Kept as a raw pointer and a length: a handle reading
/// the length must not make a reference to data a host node may write.
struct HostStorage<T> {
    data: std::ptr::NonNull<T>,
    len: usize,
    ctx: Arc<CudaContext>,
}

impl<T: Pod> HostStorage<T> {
    /// `len` zeroed elements of page-locked memory in `ctx`.
    fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<Self> {
        let bytes = crate::error::byte_len::<T>(len, None)?.max(1);
        ctx.bind_to_thread().op("cuCtxSetCurrent")?;
        // SAFETY: a context is current; the memory is zeroed below before
        // any use (all-zero is a valid Pod value).
        let raw = unsafe { cudarc::driver::result::malloc_host(bytes, 0) }.op("cuMemHostAlloc")?;
        // SAFETY: `raw` points to `bytes` freshly allocated bytes.
        unsafe { std::ptr::write_bytes(raw.cast::<u8>(), 0, bytes) };
        let data = std::ptr::NonNull::new(raw.cast::<T>()).ok_or_else(|| {
            GraphError::driver(
                "cuMemHostAlloc (returned null)",
                cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY,
                None,
            )
        })?;
        Ok(HostStorage {
            data,
            len,
            ctx: ctx.clone(),
        })
    }
}

impl<T> HostStorage<T> {
    /// The contents, shared.
    ///
    /// # Safety
    /// No one writes them while the slice lives.
    unsafe fn slice(&self) -> &[T] {
        // SAFETY: the allocation is alive (owned by self); no writer, as
        // the caller promises.
        unsafe { std::slice::from_raw_parts(self.data.as_ptr(), self.len) }
    }

    /// The contents, exclusive.
    ///
    /// # Safety
    /// No one else reads or writes them while the slice lives.
    #[allow(clippy::mut_from_ref)]
    unsafe fn slice_mut(&self) -> &mut [T] {
        // SAFETY: as for `slice`, exclusively, as the caller promises.
        unsafe { std::slice::from_raw_parts_mut(self.data.as_ptr(), self.len) }
    }
}

impl<T> Drop for HostStorage<T> {
    fn drop(&mut self) {
        // The last owner is gone: the user object (released by the driver
        // after the work of every exec; dropped on the runtime's reaper
        // thread, not the driver's), the handles and the host closures.
        // SAFETY: allocated by cuMemHostAlloc in `new`, freed once.
        crate::result::release_in_drop(&self.ctx, || unsafe {
            cudarc::driver::result::free_host(self.data.as_ptr().cast())
        });
    }
}

// SAFETY: the data is plain (Pod, Send) and owned; every access is
// ordered: nodes by the ordering rule the graph checks, the program through
// the exec's `&mut self` after waiting for its launch (see the module docs).
unsafe impl<T: Send> Send for HostStorage<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for HostStorage<T> {}

impl<T> HostBuf<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.storage.len
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The memory's address, for copy nodes.
    pub(crate) fn host_ptr(&self) -> *mut std::ffi::c_void {
        self.storage.data.as_ptr().cast()
    }

    /// How a node uses this buffer, for the ordering check.
    pub(crate) fn host_use(&self, write: bool) -> HostUse {
        HostUse {
            graph: self.graph,
            buffer: self.id,
            write,
        }
    }
}

/// A node's use of a host buffer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HostUse {
    pub graph: u64,
    pub buffer: u64,
    pub write: bool,
}

impl<'a> Graph<'a> {
    /// A host buffer of `len` zeroed elements owned by this graph: copy
    /// nodes may read or write it (`add_copy(label, device_buf, &host_buf,
    /// ..)`), host nodes see it ([`Graph::add_host_reading`],
    /// [`Graph::add_host_writing`]), and [`Exec::host_data`] hands it to the
    /// program between launches.
    ///
    /// # Errors
    /// [`GraphError::TooLarge`] for a length whose bytes overflow `usize`;
    /// [`GraphError::Driver`] when page-locked memory cannot be allocated;
    /// [`GraphError::Poisoned`]. (Bodies and device-launched graphs refuse the
    /// nodes that use it.)
    pub fn add_host_buffer<T: Pod + Send + Sync>(&mut self, len: usize) -> Result<HostBuf<T>> {
        let storage = Arc::new(HostStorage::new(&self.ctx, len)?);
        // The driver keeps the memory until the work of every exec is done.
        self.keep_alive(storage.clone())?;
        let id = crate::graph::next_id();
        self.registry
            .host_rebinding
            .buffers
            .push((id, storage.clone()));
        Ok(HostBuf {
            storage,
            graph: self.instance,
            ordinal: self.registry.host_buffers(),
            id,
        })
    }

    /// Adds a host node that calls `f` with the buffer's contents when the
    /// graph runs. Every node that writes the buffer must be ordered with
    /// it. Like any host node's closure, `f` should do host work only.
    ///
    /// # Errors
    /// As every node-adding method (see [`Graph`](crate::Graph#errors));
    /// [`GraphError::ForeignHandle`] for another graph's
    /// host buffer.
    pub fn add_host_reading<T: Pod + Send + Sync>(
        &mut self,
        label: &str,
        buffer: &HostBuf<T>,
        f: impl Fn(&[T]) + Send + Sync + 'static,
        deps: &[Node],
    ) -> Result<Node> {
        self.check_host_uses(label, deps, &[buffer.host_use(false)])?;
        let f = Arc::new(f);
        let reading = |storage: Arc<HostStorage<T>>, f: ReadFn<T>| {
            move || {
                // SAFETY: every node writing the buffer is ordered with this
                // one (checked when either was added), and the program
                // reaches it only while no launch runs (`Exec::host_data`);
                // a clone's node reads the clone's own memory.
                f(unsafe { storage.slice() })
            }
        };
        let node = self.add_host(label, reading(buffer.storage.clone(), f.clone()), deps)?;
        self.record_host_uses(node, &[buffer.host_use(false)]);
        let maker: HostNodeMaker = Arc::new(move |memory| {
            let storage = memory.downcast::<HostStorage<T>>().ok()?;
            Some(Box::new(reading(storage, f.clone())))
        });
        self.registry
            .host_rebinding
            .nodes
            .push((node.index, buffer.id, maker));
        Ok(node)
    }

    /// Adds a host node that calls `f` with the buffer's contents to change
    /// when the graph runs. Every node that uses the buffer must be ordered
    /// with it.
    ///
    /// # Errors
    /// As every node-adding method (see [`Graph`](crate::Graph#errors));
    /// [`GraphError::ForeignHandle`] for another graph's
    /// host buffer.
    pub fn add_host_writing<T: Pod + Send + Sync>(
        &mut self,
        label: &str,
        buffer: &HostBuf<T>,
        f: impl Fn(&mut [T]) + Send + Sync + 'static,
        deps: &[Node],
    ) -> Result<Node> {
        self.check_host_uses(label, deps, &[buffer.host_use(true)])?;
        let f = Arc::new(f);
        let writing = |storage: Arc<HostStorage<T>>, f: WriteFn<T>| {
            move || {
                // SAFETY: every node using the buffer is ordered with this
                // one, so nothing else reads or writes it meanwhile; see
                // `add_host_reading` for the program's side.
                f(unsafe { storage.slice_mut() })
            }
        };
        let node = self.add_host(label, writing(buffer.storage.clone(), f.clone()), deps)?;
        self.record_host_uses(node, &[buffer.host_use(true)]);
        let maker: HostNodeMaker = Arc::new(move |memory| {
            let storage = memory.downcast::<HostStorage<T>>().ok()?;
            Some(Box::new(writing(storage, f.clone())))
        });
        self.registry
            .host_rebinding
            .nodes
            .push((node.index, buffer.id, maker));
        Ok(node)
    }

    /// A new node using host buffers must be of this graph and ordered with
    /// every earlier node that uses them where either writes.
    pub(crate) fn check_host_uses(
        &self,
        label: &str,
        deps: &[Node],
        uses: &[HostUse],
    ) -> Result<()> {
        let registry = &self.registry;
        for new in uses {
            if new.graph != self.instance {
                return Err(GraphError::foreign(
                    crate::error::Foreign::HostBuffer,
                    Some(label),
                    "add a node",
                ));
            }
            for &(buffer, node, write) in &registry.host_uses {
                if buffer == new.buffer
                    && (write || new.write)
                    && !registry.ordered_before_new(node, self.level, self.holder, deps)
                {
                    return Err(GraphError::unordered(
                        label,
                        OrderRule::HostBuffer {
                            other: registry.label(node as usize).to_string(),
                        },
                    ));
                }
            }
        }
        Ok(())
    }

    pub(crate) fn record_host_uses(&mut self, node: Node, uses: &[HostUse]) {
        for u in uses {
            self.registry
                .host_uses
                .push((u.buffer, node.index, u.write));
        }
    }
}

impl<'a> Graph<'a> {
    /// This graph's handle for `buffer`: `buffer` itself if it is this
    /// graph's, or, for a clone ([`Graph::try_clone`]), the clone's own
    /// memory made for it (to hand to [`Exec::host_data`] of the clone's
    /// exec, say).
    ///
    /// # Errors
    /// [`GraphError::ForeignHandle`] for a host buffer of a graph this one
    /// is not a clone of.
    pub fn host_buffer<T: Pod + Send + Sync>(&self, buffer: &HostBuf<T>) -> Result<HostBuf<T>> {
        if buffer.graph == self.instance {
            return Ok(buffer.clone());
        }
        let rebinding = &self.registry().host_rebinding;
        let foreign = || {
            GraphError::foreign(
                crate::error::Foreign::HostBuffer,
                None,
                "Graph::host_buffer",
            )
        };
        let id = rebinding
            .renamed
            .iter()
            .find(|(old, _)| *old == buffer.id)
            .map(|(_, new)| *new)
            .ok_or_else(foreign)?;
        let memory = rebinding
            .buffers
            .iter()
            .find(|(b, _)| *b == id)
            .map(|(_, m)| m.clone())
            .ok_or_else(foreign)?;
        let storage = memory
            .into_any()
            .downcast::<HostStorage<T>>()
            .map_err(|_| foreign())?;
        Ok(HostBuf {
            storage,
            graph: self.instance,
            ordinal: buffer.ordinal,
            id,
        })
    }

    /// Gives `clone` (a `cuGraphClone` of this graph, its registry this
    /// one's) host memory of its own: fresh zeroed buffers, its copy nodes
    /// and host nodes pointed at them, its records renamed to them.
    pub(crate) fn give_clone_host_memory(&self, clone: &mut Graph<'a>) -> Result<()> {
        let old = self.registry().host_rebinding.clone();
        let mut fresh: Vec<(u64, u64, Arc<dyn HostMemory>)> = Vec::new();
        for (id, memory) in &old.buffers {
            let made = memory.fresh(&self.ctx)?;
            clone.keep_alive(made.clone())?;
            fresh.push((*id, crate::graph::next_id(), made));
        }
        let find = |id: u64| fresh.iter().find(|(o, _, _)| *o == id);
        // The copy nodes among the nodes that use a host buffer.
        let copies = self.registry().host_uses.iter().filter(|&&(_, node, _)| {
            self.registry().nodes[node as usize].kind == crate::node::NodeKind::Memcpy
        });
        for &(id, node, _) in copies {
            let (Some((_, _, made)), Some(original)) =
                (find(id), old.buffers.iter().find(|(b, _)| *b == id))
            else {
                continue;
            };
            let (from, to) = (original.1.ptr(), made.ptr());
            let raw = clone.registry.nodes[node as usize].raw;
            let label = clone.registry.label(node as usize).to_string();
            clone
                .ctx
                .bind_to_thread()
                .op_at("cuCtxSetCurrent", &label)?;
            // SAFETY: `raw` is a live copy node of the clone.
            let mut params = unsafe { crate::result::memcpy_node_params(raw) }
                .op_at("cuGraphMemcpyNodeGetParams", &label)?;
            if params.srcHost.cast_mut() == from {
                params.srcHost = to.cast_const();
            }
            if params.dstHost == from {
                params.dstHost = to;
            }
            // SAFETY: as above; the new memory is the clone's (kept alive
            // by it above), of the same length.
            unsafe { crate::result::set_memcpy_node_params(raw, &params) }
                .op_at("cuGraphMemcpyNodeSetParams", &label)?;
        }
        // The rebound closures report panics to the clone's execs alone.
        clone
            .registry
            .host_faults
            .insert(0, Arc::new(Default::default()));
        for (node, id, maker) in &old.nodes {
            let Some((_, _, made)) = find(*id) else {
                continue;
            };
            let label = clone.registry.label(*node as usize).to_string();
            let Some(f) = maker(made.clone().into_any()) else {
                return Err(GraphError::foreign(
                    crate::error::Foreign::HostBufferOfOtherType,
                    Some(&label),
                    "Graph::try_clone",
                ));
            };
            let raw = clone.registry.nodes[*node as usize].raw;
            crate::user_object::rebind_host_node(clone, raw, &label, f)?;
        }
        let rename = |id: u64| find(id).map_or(id, |(_, new, _)| *new);
        let registry = &mut clone.registry;
        for (buffer, _, _) in &mut registry.host_uses {
            *buffer = rename(*buffer);
        }
        let rebinding = &mut registry.host_rebinding;
        rebinding.buffers = fresh.iter().map(|(_, new, m)| (*new, m.clone())).collect();
        for (_, buffer, _) in &mut rebinding.nodes {
            *buffer = rename(*buffer);
        }
        // Handles of this graph, and of the graphs it was cloned from.
        let mut renamed: Vec<(u64, u64)> = fresh.iter().map(|(o, n, _)| (*o, *n)).collect();
        for &(older, mine) in &old.renamed {
            renamed.push((older, rename(mine)));
        }
        rebinding.renamed = renamed;
        Ok(())
    }
}

impl<'a> Exec<'a> {
    /// The contents of a host buffer of this exec's graph, between launches:
    /// waits for the last launch, then hands it out for as long as the exec
    /// is borrowed (so no launch can run meanwhile).
    ///
    /// # Errors
    /// [`GraphError::ForeignHandle`] for another graph's buffer;
    /// [`GraphError::Unsupported`] for a buffer added to the graph after
    /// this exec was instantiated; a driver error if waiting for the
    /// launch failed.
    pub fn host_data<'e, T: Pod>(&'e mut self, buffer: &'e HostBuf<T>) -> Result<&'e mut [T]> {
        if buffer.graph != self.original_graph() {
            return Err(GraphError::foreign(
                crate::error::Foreign::HostBuffer,
                None,
                "Exec::host_data",
            ));
        }
        // An exec instantiated before the buffer existed holds no claim to
        // it (it took no one-exec slot for it): a later exec of the graph
        // may be using it.
        if buffer.ordinal > self.host_buffers() {
            return Err(GraphError::unsupported(
                "host_data",
                None,
                Unsupported::HostBufferAfterInstantiation,
            ));
        }
        self.wait_for_last_launch()?;
        // SAFETY: the buffer is this exec's graph's and existed when the
        // exec was instantiated, so the exec holds the graph's one-exec slot
        // (no other exec of the graph lives); its last launch is done, and
        // `&mut self` keeps any other launch away while the slice lives.
        Ok(unsafe { buffer.storage.slice_mut() })
    }
}
