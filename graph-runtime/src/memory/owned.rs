//! Graph-owned device buffers at the API: [`Graph::add_buffer`] makes one,
//! [`Exec::buffer`] lends it out between launches (see `crate::owned` for
//! how their uses are ordered without an event per buffer).

use crate::buffer::{lock, Buf, Resources};
use crate::error::{DriverResultExt, GraphError, Result};
use crate::exec::Exec;
use crate::graph::Graph;
use crate::owned::OwnedBuffers;
use crate::result;
use bytemuck::Pod;
use cudarc::driver::{
    sys, CudaEvent, CudaStream, DevicePtr, DevicePtrMut, DeviceSlice, SyncOnDrop,
};
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
    /// let head = stream.clone_dtoh(&exec.buffer(x.slice(0..1))?).unwrap();
    /// assert_eq!(head, [1.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`GraphError::TooLarge`] for a length whose bytes overflow `usize`;
    /// [`GraphError::Driver`] when the memory cannot be allocated (or the
    /// stream of the buffers' last use is capturing);
    /// [`GraphError::Poisoned`].
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
    /// or a part of one), between launches: cudarc's copies read and write
    /// it (`stream.clone_dtoh(&exec.buffer(x)?)`), on any stream; each use
    /// is ordered after the exec's launches and before the next. While it
    /// lives, the exec is borrowed and the graph's buffers are lent out:
    /// launches of other execs that share them are refused
    /// ([`GraphError::BufferLent`]).
    ///
    /// # Errors
    /// [`GraphError::ForeignHandle`] if `buf` is not within a buffer this
    /// exec's graph owns; [`GraphError::BufferLent`] while another exec
    /// that shares them lends them out.
    pub fn buffer<T>(&mut self, buf: Buf<'a, T>) -> Result<OwnedMut<'_, 'a, T>> {
        let (resources, id) = self.resources();
        let foreign = || GraphError::ForeignHandle {
            what: "the buffer passed to `Exec::buffer` (it must be a buffer this exec's graph \
                   owns: `Graph::add_buffer`)"
                .to_string(),
        };
        let used = buf.as_use(false);
        if used.root != id || used.alloc.is_some() {
            return Err(foreign());
        }
        let mut set = lock(resources);
        let (home, event) = match &set.owned {
            Some(owned) if owned.contains(buf.device_ptr(), buf.num_bytes()) => {
                (owned.home().clone(), owned.event().clone())
            }
            _ => return Err(foreign()),
        };
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
            home,
            event,
            _element: PhantomData,
            _one_thread: PhantomData,
        })
    }
}

/// A graph-owned buffer lent out by its exec between launches
/// ([`Exec::buffer`]): `len` elements of `T` for cudarc's copies and other
/// calls that take a `DevicePtr`. Each use waits for the buffers' last use
/// (a launch, or an earlier use on another stream) and becomes the last.
/// A use on a stream of another context, or on the per-thread default
/// stream, is waited for before cudarc's call returns.
///
/// # Panics
/// A use on a capturing stream (it would be recorded into a graph that
/// could run after the buffer is freed), or while the stream of the
/// buffers' last use is capturing (nothing could wait for that use).
pub struct OwnedMut<'e, 'a, T> {
    resources: &'e Mutex<Resources<'a>>,
    ptr: u64,
    len: usize,
    /// The context's default stream, where the buffers were made
    /// (`DeviceSlice::stream`).
    home: Arc<CudaStream>,
    /// The set's event (`OwnedBuffers::event`), which cudarc's guards
    /// record a use in.
    event: Arc<CudaEvent>,
    _element: PhantomData<fn() -> T>,
    /// Not `Sync`: two shared uses at once on two threads could each
    /// record the event over the other's use.
    _one_thread: PhantomData<std::cell::Cell<()>>,
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
        // cudarc's guards skip their records (and synchronizes) while an
        // error is stored in the context: with one stored, the event may
        // not cover the last use, so the whole context is waited for (by
        // the driver directly). A wait refused by a capture leaves the
        // buffers lent out for good: every launch that would use them is
        // refused rather than unordered.
        let ctx = self.home.context();
        if let Err(stored) = ctx.check_err() {
            ctx.record_err::<()>(Err(stored));
            match result::context_synchronize(ctx) {
                Ok(()) => {}
                Err(e) if result::refused_by_capture(e.0) => return,
                // A fault: nothing runs any more.
                Err(e) => ctx.record_err::<()>(Err(e)),
            }
        }
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

    /// Orders a use on `stream` after the buffers' last use and makes it
    /// the last (see the type's docs).
    fn access<'s>(&'s self, stream: &'s CudaStream) -> SyncOnDrop<'s> {
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
        owned.accessed_on(&self.event, stream)
    }
}

impl<T> DeviceSlice<T> for OwnedMut<'_, '_, T> {
    fn len(&self) -> usize {
        self.len
    }
    fn stream(&self) -> &Arc<CudaStream> {
        &self.home
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
