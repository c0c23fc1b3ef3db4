//! Graph-owned device buffers at the API: [`Graph::add_buffer`] makes one,
//! [`Exec::buffer`] lends it out between launches (see `crate::owned` for
//! how their uses are ordered without an event per buffer).

use crate::buffer::{lock, Buf, Resources};
use crate::error::{DriverResultExt, GraphError, Result};
use crate::exec::Exec;
use crate::graph::Graph;
use crate::owned::OwnedBuffers;
use bytemuck::Pod;
use cudarc::driver::{sys, CudaStream, DevicePtr, DevicePtrMut, DeviceSlice, SyncOnDrop};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

impl<'a> Graph<'a> {
    /// `len` zeroed elements of device memory that the graph owns: nodes use
    /// it through the returned [`Buf`] (writable), as they use a slice bound
    /// with `bind_mut`, and an exec lends it out between launches
    /// ([`Exec::buffer`]). Unlike a bound cudarc slice, it costs a launch
    /// nothing per buffer: cudarc does not track it, and the graph orders
    /// its uses itself, all its buffers at once. Clones and graphs made by
    /// `new_sharing` share it; it is freed when the last of them and their
    /// execs is gone, after its last use.
    ///
    /// ```no_run
    /// # use graph_runtime::{kernel::KernelDef, Graph, LaunchConfig};
    /// # use graph_runtime::__doc_kernels as kernels;
    /// # fn main() -> graph_runtime::Result<()> {
    /// let ctx = graph_runtime::driver::context(0)?;
    /// let stream = ctx.new_stream().unwrap();
    /// let mut graph = Graph::new(&ctx)?;
    /// let x = graph.add_buffer::<f32>(1024)?;
    /// let bump = kernels::AddOne::load(&ctx)?;
    /// graph.add_kernel("bump", &bump, LaunchConfig::for_elements(1024, 256), (x, 1024), &[])?;
    /// let mut exec = graph.instantiate()?;
    /// exec.launch(&stream)?;
    /// let head = stream.clone_dtoh(&exec.buffer(x.slice(0..1), &stream)?).unwrap();
    /// assert_eq!(head, [1.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`GraphError::TooLarge`] for a length whose bytes overflow `usize`;
    /// [`GraphError::Driver`] when the memory cannot be allocated (or the
    /// stream of the buffers' last use is capturing);
    /// [`GraphError::BufferLent`] while an exec lends the graph's buffers
    /// out; [`GraphError::Poisoned`].
    pub fn add_buffer<T: Pod>(&mut self, len: usize) -> Result<Buf<'a, T>> {
        self.owner.check_poisoned()?;
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or(GraphError::TooLarge {
                label: None,
                elements: len,
                element_size: std::mem::size_of::<T>(),
                device_bytes: None,
            })?;
        let mut resources = lock(&self.resources);
        // A loan's uses may not be queued yet: a new buffer (zeroed on the
        // default stream) would be ordered only after what is.
        if resources.lent {
            return Err(GraphError::BufferLent {
                operation: "add_buffer",
            });
        }
        let owned = match &mut resources.owned {
            Some(owned) => owned,
            none => none.insert(OwnedBuffers::new(&self.ctx).op("cuEventCreate")?),
        };
        let ptr = owned.allocate(bytes).op("cuMemAllocAsync")?;
        Ok(Buf::new(ptr, len, true, self.resource_id, None))
    }
}

impl<'a> Exec<'a> {
    /// The graph-owned buffer behind `buf` (made by [`Graph::add_buffer`],
    /// or a part of one), lent for use on `stream` between launches:
    /// cudarc's calls on `stream` read and write it
    /// (`stream.clone_dtoh(&exec.buffer(x, &stream)?)`), ordered after the
    /// exec's launches and before the next (on any stream). While it
    /// lives, the exec is borrowed and the graph's buffers are lent out:
    /// launches of other execs that share them are refused
    /// ([`GraphError::BufferLent`]).
    ///
    /// # Errors
    /// [`GraphError::ForeignHandle`] if `buf` is not within a buffer this
    /// exec's graph owns, or `stream` is of another context;
    /// [`GraphError::StreamRefused`] for the per-thread default stream or
    /// a capturing stream; [`GraphError::BufferLent`] while another exec
    /// that shares the buffers lends them out.
    pub fn buffer<T>(
        &mut self,
        buf: Buf<'a, T>,
        stream: &Arc<CudaStream>,
    ) -> Result<OwnedMut<'_, 'a, T>> {
        let (resources, id, ctx) = self.resources();
        let foreign = || GraphError::ForeignHandle {
            what: "the buffer passed to `Exec::buffer` (it must be a buffer this exec's graph \
                   owns: `Graph::add_buffer`)"
                .to_string(),
        };
        let used = buf.as_use(false);
        if used.root != id || used.alloc.is_some() {
            return Err(foreign());
        }
        crate::ordering::check_stream(ctx, stream, "buffer")?;
        let mut set = lock(resources);
        match &set.owned {
            Some(owned) if owned.contains(buf.device_ptr(), buf.num_bytes()) => {}
            _ => return Err(foreign()),
        }
        if set.lent {
            return Err(GraphError::BufferLent {
                operation: "buffer",
            });
        }
        set.lent = true;
        Ok(OwnedMut {
            resources,
            ptr: buf.device_ptr(),
            len: buf.len(),
            lent_for: stream.clone(),
            sentinel: stream.context().default_stream(),
            _element: PhantomData,
        })
    }
}

/// A graph-owned buffer lent out by its exec between launches, for use on
/// one stream ([`Exec::buffer`]): `len` elements of `T` for cudarc's copies
/// and other calls that take a `DevicePtr`, made on that stream. The first
/// use waits for the buffers' last use (a launch, or an earlier loan on
/// another stream); the next use of the buffers, on any stream, waits for
/// everything queued on this one.
///
/// # Panics
/// A use on another stream than the one it was lent for (cudarc's copies
/// across contexts among them: nothing could order the other context's
/// stream), or on a capturing stream (it would be recorded into a graph
/// that could run after the buffer is freed).
pub struct OwnedMut<'e, 'a, T> {
    resources: &'e Mutex<Resources<'a>>,
    ptr: u64,
    len: usize,
    /// The stream it is lent for.
    lent_for: Arc<CudaStream>,
    /// What `DeviceSlice::stream` returns: a stream of the buffers' context
    /// that no use may name. cudarc passes it where it uses a buffer on a
    /// stream of another context (`memcpy_dtod`'s peer copy), which is
    /// refused.
    sentinel: Arc<CudaStream>,
    _element: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for OwnedMut<'_, '_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnedMut")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.len)
            .finish()
    }
}

impl<T> Drop for OwnedMut<'_, '_, T> {
    fn drop(&mut self) {
        // The uses are queued on the loan's stream, which the set holds as
        // the stream of the buffers' last use: the next use waits for them.
        lock(self.resources).lent = false;
    }
}

impl<T> OwnedMut<'_, '_, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Orders a use on `stream` after the buffers' last use and makes the
    /// loan's stream the last (see the type's docs).
    fn access<'s>(&'s self, stream: &'s CudaStream) -> SyncOnDrop<'s> {
        assert!(
            std::ptr::eq(stream, &*self.lent_for),
            "a graph-owned buffer (Exec::buffer) was used on another stream than the one it was \
             lent for (a copy across contexts cannot be ordered)"
        );
        let mut set = lock(self.resources);
        let Some(owned) = set.owned.as_mut() else {
            unreachable!("lent out by `Exec::buffer`, which found it")
        };
        if let Err(e) = owned.order(stream) {
            panic!(
                "a graph-owned buffer (Exec::buffer) was used on a capturing stream, or while \
                 the stream of its last use is capturing: {e:?}"
            );
        }
        owned.used_on(&self.lent_for);
        SyncOnDrop::Sync(None)
    }
}

impl<T> DeviceSlice<T> for OwnedMut<'_, '_, T> {
    fn len(&self) -> usize {
        self.len
    }
    fn stream(&self) -> &Arc<CudaStream> {
        &self.sentinel
    }
}

impl<T> DevicePtr<T> for OwnedMut<'_, '_, T> {
    fn device_ptr<'s>(&'s self, stream: &'s CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'s>) {
        (self.ptr, self.access(stream))
    }
}

impl<T> DevicePtrMut<T> for OwnedMut<'_, '_, T> {
    fn device_ptr_mut<'s>(
        &'s mut self,
        stream: &'s CudaStream,
    ) -> (sys::CUdeviceptr, SyncOnDrop<'s>) {
        (self.ptr, self.access(stream))
    }
}
