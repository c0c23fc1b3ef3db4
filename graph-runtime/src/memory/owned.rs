//! Graph-owned device buffers at the API: [`Graph::add_buffer`] makes one,
//! [`Exec::buffer`] lends it out between launches (see `crate::owned` for
//! how their uses are ordered without an event per buffer).

use crate::buffer::{lock, Buf, Resources};
use crate::copies::{copy_and_wait, order_refused};
use crate::error::{DriverResultExt, GraphError, Result};
use crate::exec::Exec;
use crate::graph::Graph;
use crate::owned::{CopyOn, OwnedBuffers};
use bytemuck::Pod;
use cudarc::driver::{sys, DriverError};
use std::marker::PhantomData;
use std::sync::Mutex;

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
    /// let head = exec.buffer(x.slice(0..1))?.to_host()?;
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
        let bytes = crate::error::byte_len::<T>(len, None)?;
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
    /// or a part of one), lent out between launches: read it to the host,
    /// write it from the host, or zero it ([`OwnedMut`]), each ordered after
    /// the exec's launches and done before the call returns. While it lives,
    /// the exec is borrowed and the graph's buffers are lent out: launches
    /// of other execs that share them are refused
    /// ([`GraphError::BufferLent`]).
    ///
    /// # Errors
    /// [`GraphError::ForeignHandle`] if `buf` is not within a buffer this
    /// exec's graph owns; [`GraphError::BufferLent`] while another exec
    /// that shares the buffers lends them out.
    pub fn buffer<T: Pod>(&mut self, buf: Buf<'a, T>) -> Result<OwnedMut<'_, 'a, T>> {
        let (resources, id) = self.resources();
        let foreign = || GraphError::foreign(crate::error::Foreign::NotOwned, None, "Exec::buffer");
        let used = buf.as_use(false);
        if used.root != id || used.alloc.is_some() {
            return Err(foreign());
        }
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
            _element: PhantomData,
        })
    }
}

/// A graph-owned buffer lent out by its exec between launches
/// ([`Exec::buffer`]): `len` elements of `T` to read to the host, write
/// from the host, or zero. Each call makes its copy (or fill) on a stream
/// no caller gets, so nobody can begin a capture there, and waits for it
/// before returning. Which stream: after a launch on an exec's own
/// stream ([`Exec::launch_on_own_stream`]; this exec's, or that of one
/// sharing the buffers), that one, with no event;
/// otherwise the runtime's copy stream, made to wait for the buffers' last
/// use (the exec's last launch, say) by an event. The runtime makes every
/// call itself: no caller code runs between its checks and the work it
/// queues (a cudarc `DevicePtr` would let it run there), and no lock is
/// held while it waits.
///
/// A copy that cannot be waited for (another thread's global-mode capture
/// refusing the wait, say) may still run: the buffers are then *stuck*,
/// lent out for good. Launches of the execs that share them are refused
/// ([`GraphError::BufferLent`]) and they are never freed: memory is
/// leaked, nothing uses freed memory.
pub struct OwnedMut<'e, 'a, T> {
    resources: &'e Mutex<Resources<'a>>,
    ptr: u64,
    len: usize,
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
        // Every call waited for its work (nothing of the loan is pending),
        // or left the buffers stuck: lent for good.
        let mut set = lock(self.resources);
        if !set.owned.as_ref().is_some_and(|owned| owned.stuck) {
            set.lent = false;
        }
    }
}

impl<T: Pod> OwnedMut<'_, '_, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The elements, copied to the host. Blocks until the buffers' last
    /// use (the exec's last launch, say) and the copy are done.
    ///
    /// # Errors
    /// [`GraphError::StreamRefused`] when the stream of the buffers' last
    /// use is capturing (nothing is queued), or when the runtime's copy
    /// stream joined another thread's capture (the buffers are then stuck:
    /// see [`OwnedMut`]); [`GraphError::Driver`] when the copy fails (or a
    /// launch before it faulted), or cannot be waited for (stuck).
    pub fn to_host(&self) -> Result<Vec<T>> {
        let host = vec![T::zeroed(); self.len];
        // SAFETY: `host` holds `len` elements, the buffer at least as many
        // from `ptr` (checked when lent); `run` waits for the copy.
        self.run(
            "cuMemcpyDtoHAsync",
            |_| host,
            |stream, host| unsafe {
                cudarc::driver::result::memcpy_dtoh_async(host, self.ptr, stream)
            },
        )
    }

    /// Copies the elements into `host`, as [`OwnedMut::to_host`] does but
    /// with no allocation per call: through a staging vector the graph's
    /// buffers keep (the copy is asynchronous for page-locked host memory,
    /// which `host` may be), then into `host`. Lend a part of a buffer
    /// (`exec.buffer(buf.slice(0..1))`) to read only that part.
    ///
    /// # Errors
    /// As [`OwnedMut::to_host`].
    ///
    /// # Panics
    /// If `host` does not hold exactly `len` elements.
    pub fn copy_to_host(&self, host: &mut [T]) -> Result<()> {
        assert_eq!(
            host.len(),
            self.len,
            "OwnedMut::copy_to_host: a buffer of {} elements into {}",
            self.len,
            host.len()
        );
        let bytes = std::mem::size_of_val(host);
        if bytes == 0 {
            return Ok(());
        }
        let take = |owned: &mut OwnedBuffers| {
            let mut staging = std::mem::take(&mut owned.staging);
            staging.clear();
            staging.resize(bytes, 0);
            staging
        };
        // SAFETY: `staging` holds `bytes` bytes, the buffer as many from
        // `ptr` (checked when lent); `run` waits for the copy.
        let staged = self.run("cuMemcpyDtoHAsync", take, |stream, staging| unsafe {
            cudarc::driver::result::memcpy_dtoh_async(staging, self.ptr, stream)
        })?;
        bytemuck::cast_slice_mut::<T, u8>(host).copy_from_slice(&staged);
        if let Some(owned) = lock(self.resources).owned.as_mut() {
            owned.staging = staged;
        }
        Ok(())
    }

    /// Writes `host` into the buffer.
    ///
    /// # Errors
    /// As [`OwnedMut::to_host`].
    ///
    /// # Panics
    /// If `host` does not hold exactly `len` elements.
    pub fn write(&mut self, host: &[T]) -> Result<()> {
        assert_eq!(
            host.len(),
            self.len,
            "OwnedMut::write: {} elements into a buffer of {}",
            host.len(),
            self.len
        );
        // Copied through a vector of the runtime's own (the copy is
        // asynchronous for page-locked host memory).
        let staging = host.to_vec();
        // SAFETY: `staging` holds `len` elements, the buffer at least as
        // many from `ptr`; `run` waits for the copy.
        self.run(
            "cuMemcpyHtoDAsync",
            |_| staging,
            |stream, staging| unsafe {
                cudarc::driver::result::memcpy_htod_async(self.ptr, staging, stream)
            },
        )
        .map(drop)
    }

    /// Sets every byte of the buffer to zero.
    ///
    /// # Errors
    /// As [`OwnedMut::to_host`].
    pub fn zero(&mut self) -> Result<()> {
        let bytes = self.len * std::mem::size_of::<T>();
        // SAFETY: the buffer holds `bytes` bytes from `ptr`.
        self.run(
            "cuMemsetD8Async",
            |_| Vec::<u8>::new(),
            |stream, _| unsafe {
                cudarc::driver::result::memset_d8_async(self.ptr, 0, bytes, stream)
            },
        )
        .map(drop)
    }

    /// Makes `work` (with `host`, the host memory it copies, the
    /// runtime's own) after the buffers' last use, and waits for it: on
    /// the stream of that use if no caller gets it (an exec's own),
    /// otherwise on the runtime's copy stream, which waits for an event
    /// recorded there (one host wait in all, for the copy). The lock is
    /// held only to queue the stream's wait: no lock is held while the host waits,
    /// so a host node the copy waits for may take it (the loan keeps the
    /// last use where it is: launches, other loans and new buffers are
    /// refused while it lives). A copy that may still run when the call
    /// returns (see `CopyStream::copy_and_wait`) leaves the buffers lent
    /// out for good, never freed.
    /// `host` makes the host memory under the buffers' lock (a vector of
    /// the runtime's own: the buffers' staging vector, say).
    fn run<U>(
        &self,
        operation: &'static str,
        host: impl FnOnce(&mut OwnedBuffers) -> Vec<U>,
        work: impl FnOnce(sys::CUstream, &mut [U]) -> std::result::Result<(), DriverError>,
    ) -> Result<Vec<U>> {
        let stick = || {
            // Lent out for good: never launched, never freed.
            if let Some(owned) = lock(self.resources).owned.as_mut() {
                owned.stuck = true;
            }
        };
        let (on, host) = {
            let mut set = lock(self.resources);
            let Some(owned) = set.owned.as_mut() else {
                unreachable!("lent out by `Exec::buffer`, which found it")
            };
            let on = owned
                .copy_stream()
                .map_err(|e| order_refused(operation, e))?;
            (on, host(owned))
        };
        match on {
            CopyOn::Runtime(copies) => copies.copy_and_wait(operation, host, work, stick),
            // SAFETY: the stream is live (held), of the buffers' context,
            // and no caller gets it (an exec's own).
            // (`uncaptured`: see `OwnedBuffers::copy_stream`.)
            CopyOn::LastUse(stream, uncaptured) => unsafe {
                copy_and_wait(
                    stream.context(),
                    (stream.cu_stream(), uncaptured),
                    operation,
                    host,
                    work,
                    stick,
                )
            },
        }
    }
}
