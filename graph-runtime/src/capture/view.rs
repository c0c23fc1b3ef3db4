//! What captured work is handed: the capture's stream, and views of the
//! graph's buffers that cudarc's library calls (cuBLAS, say) accept.
//!
//! cudarc orders its work on a `CudaSlice` through events (its event
//! tracking, on by default): a call waits on the slice's last write or
//! reads and records its own use. Inside a capture that breaks the capture
//! (the wait is on an event recorded outside it), and the events would be
//! left recorded in a capturing stream. The views here implement cudarc's
//! [`DevicePtr`]/[`DevicePtrMut`] without events: inside the graph the
//! captured work is ordered by the node's edges, and the exec orders each
//! launch with cudarc's other work on the bound slices, as for any node.

use crate::buffer::{Buf, BufferUse};
use crate::result;
use cudarc::driver::{
    sys, CudaStream, DevicePtr, DevicePtrMut, DeviceSlice, LaunchArgs, PushKernelArg, SyncOnDrop,
};
use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::Arc;

/// Handed to a capture node's work: the stream to issue it on, and views
/// of the graph's buffers ([`Buf`]s of this graph) for cudarc's calls.
///
/// Each view declares the node's use of the buffer, checked like a kernel
/// node's when the node is added: the buffer belongs to this graph, a
/// written one was bound with `bind_mut` (or is a graph allocation), and a
/// graph allocation is used between its alloc and free nodes.
pub struct Capture<'c, 'a> {
    stream: &'c Arc<CudaStream>,
    /// The capture's id (`cuStreamGetCaptureInfo`): views check it.
    id: u64,
    uses: RefCell<Vec<BufferUse>>,
    /// Streams forked into the capture (joined again when the work ends).
    forks: RefCell<Vec<Arc<CudaStream>>>,
    _buffers: PhantomData<Buf<'a, ()>>,
}

impl std::fmt::Debug for Capture<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture")
            .field("buffers", &self.uses.borrow().len())
            .finish_non_exhaustive()
    }
}

impl<'c, 'a> Capture<'c, 'a> {
    pub(crate) fn new(stream: &'c Arc<CudaStream>, id: u64) -> Self {
        Capture {
            stream,
            id,
            uses: RefCell::new(Vec::new()),
            forks: RefCell::new(Vec::new()),
            _buffers: PhantomData,
        }
    }

    /// The capturing stream: issue the work on it (give it to
    /// `CudaBlas::new`, say).
    pub fn stream(&self) -> &'c Arc<CudaStream> {
        self.stream
    }

    /// Forks `stream` into the capture (cudarc's `stream.join(capture
    /// stream)`): it waits for the work captured so far, and the work then
    /// issued on it is captured too, so the views answer there as on the
    /// capture stream. Join it back with [`Capture::join`] where the work
    /// on the capture stream must wait for it; a fork still open when the
    /// work returns (or panics) is joined back then, so the capture ends
    /// whole and the stream leaves it. (A stream forked with cudarc's own
    /// `join` and left open fails the capture,
    /// `CUDA_ERROR_STREAM_CAPTURE_UNJOINED`, and stays unusable.)
    ///
    /// Two memsets on forked streams, joined before the work goes on:
    ///
    /// ```no_run
    /// # fn main() -> graph_runtime::Result<()> {
    /// use graph_runtime::capture::captured;
    /// let ctx = graph_runtime::driver::context(0)?;
    /// let (stream, s1, s2) = (ctx.new_stream()?, ctx.new_stream()?, ctx.new_stream()?);
    /// let (mut a, mut b) = (stream.alloc_zeros::<f32>(256)?, stream.alloc_zeros::<f32>(256)?);
    /// let mut g = graph_runtime::Graph::new(&ctx)?;
    /// let (ab, bb) = (g.bind_mut(&mut a), g.bind_mut(&mut b));
    /// // SAFETY: the work touches only the views' buffers, on streams in the capture.
    /// unsafe {
    ///     g.add_capture("clear", &stream, &[], |cap| {
    ///         cap.fork(&s1)?;
    ///         cap.fork(&s2)?;
    ///         s1.memset_zeros(&mut cap.write(ab)).map_err(|e| captured("memset a", e))?;
    ///         s2.memset_zeros(&mut cap.write(bb)).map_err(|e| captured("memset b", e))?;
    ///         cap.join(&s1)?;
    ///         cap.join(&s2)
    ///     })
    /// }?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`GraphError::ForeignHandle`](crate::GraphError::ForeignHandle) for
    /// a stream of another context; the driver's, when the stream cannot
    /// join (one in another capture, say).
    pub fn fork(&self, stream: &Arc<CudaStream>) -> crate::Result<()> {
        self.same_context(stream, "Capture::fork")?;
        stream
            .join(self.stream)
            .map_err(|e| super::captured("fork (cuStreamWaitEvent)", e))?;
        self.forks.borrow_mut().push(stream.clone());
        Ok(())
    }

    /// Joins a forked stream back: the capture stream waits for the work
    /// captured on `stream` so far.
    ///
    /// # Errors
    /// The driver's, as for [`Capture::fork`].
    pub fn join(&self, stream: &Arc<CudaStream>) -> crate::Result<()> {
        self.same_context(stream, "Capture::join")?;
        self.stream
            .join(stream)
            .map_err(|e| super::captured("join (cuStreamWaitEvent)", e))
        // (It stays in `forks`: work issued on it after this join is still
        // captured, and is joined back when the work returns.)
    }

    /// Refuses a stream of another context than the capture's.
    fn same_context(&self, stream: &CudaStream, operation: &'static str) -> crate::Result<()> {
        if stream.context().cu_ctx() == self.stream.context().cu_ctx() {
            return Ok(());
        }
        Err(crate::GraphError::foreign(
            crate::error::Foreign::StreamOfOtherContext,
            None,
            operation,
        ))
    }

    /// A view of `buf` that the captured work reads.
    pub fn read<T>(&self, buf: Buf<'a, T>) -> CaptureView<'_, T> {
        self.view(buf, false)
    }

    /// A view of `buf` that the captured work writes (and may read). A
    /// buffer bound read-only makes adding the node fail, naming it.
    pub fn write<T>(&self, buf: Buf<'a, T>) -> CaptureViewMut<'_, T> {
        CaptureViewMut {
            view: self.view(buf, true),
        }
    }

    /// A view of `buf`, its use declared.
    fn view<T>(&self, buf: Buf<'a, T>, write: bool) -> CaptureView<'_, T> {
        self.uses.borrow_mut().push(buf.as_use(write));
        CaptureView {
            ptr: buf.device_ptr(),
            len: buf.len(),
            stream: self.stream,
            id: self.id,
            _element: PhantomData,
        }
    }

    /// The uses the views declared (the open forks joined back).
    pub(crate) fn into_uses(self) -> Vec<BufferUse> {
        std::mem::take(&mut *self.uses.borrow_mut())
    }
}

impl Drop for Capture<'_, '_> {
    /// Joins every forked stream into the capture stream (again, for those
    /// the work joined: work issued after a join is captured too) before
    /// the capture ends, when the work returned, failed or panicked: a
    /// fork left out would fail the capture and leave its stream unusable.
    /// A join the driver refuses (the capture already broken) is left: the
    /// capture's end reports the error.
    fn drop(&mut self) {
        for fork in self.forks.get_mut().drain(..) {
            let _ = self.stream.join(&fork);
        }
    }
}

/// A graph buffer the captured work reads, for cudarc calls on the capture
/// stream (it implements cudarc's [`DevicePtr`]). It lives only as long as
/// the work's [`Capture`].
pub struct CaptureView<'c, T> {
    ptr: u64,
    len: usize,
    stream: &'c Arc<CudaStream>,
    id: u64,
    _element: PhantomData<fn() -> T>,
}

impl<T> CaptureView<'_, T> {
    /// The address, for work on `stream`: only while the view's capture is
    /// in progress and only on a stream in that capture (the capture
    /// stream, or one forked from it: each reports the capture's id), where
    /// the work is captured. Used anywhere else it would run at once,
    /// unordered with the graph's launches (and for a graph allocation,
    /// before it exists): a panic, which ends and discards the capture.
    fn address(&self, stream: Option<&CudaStream>) -> sys::CUdeviceptr {
        let on = stream.map_or(self.stream.cu_stream(), |s| s.cu_stream());
        // SAFETY: the stream is live (borrowed by the caller, or the
        // capture stream, borrowed for the capture).
        let capture = unsafe { result::capture_id(on) };
        if capture.ok() != Some(self.id) {
            panic!(
                "a capture node's view of a graph buffer was used outside its capture ({}): \
                 views serve only work issued on the capture stream, or on streams forked from it \
                 (`Capture::fork`), while the capture is in progress",
                if on == self.stream.cu_stream() {
                    "the capture ended"
                } else {
                    "on a stream that is not in the capture"
                }
            );
        }
        self.ptr
    }
}

/// A graph buffer the captured work writes, for cudarc calls on the
/// capture stream (it implements cudarc's [`DevicePtr`] and
/// [`DevicePtrMut`]). It lives only as long as the work's [`Capture`].
pub struct CaptureViewMut<'c, T> {
    view: CaptureView<'c, T>,
}

impl<T> std::fmt::Debug for CaptureView<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaptureView")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.len)
            .finish()
    }
}

impl<T> std::fmt::Debug for CaptureViewMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaptureViewMut")
            .field("ptr", &format_args!("{:#x}", self.view.ptr))
            .field("len", &self.view.len)
            .finish()
    }
}

impl<T> DeviceSlice<T> for CaptureView<'_, T> {
    fn len(&self) -> usize {
        self.len
    }
    fn stream(&self) -> &Arc<CudaStream> {
        self.stream
    }
}

impl<T> DeviceSlice<T> for CaptureViewMut<'_, T> {
    fn len(&self) -> usize {
        self.view.len()
    }
    fn stream(&self) -> &Arc<CudaStream> {
        self.view.stream()
    }
}

// No event to wait on or record: see the module docs.
impl<T> DevicePtr<T> for CaptureView<'_, T> {
    fn device_ptr<'s>(&'s self, stream: &'s CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'s>) {
        (self.address(Some(stream)), SyncOnDrop::Record(None))
    }
}

impl<T> DevicePtr<T> for CaptureViewMut<'_, T> {
    fn device_ptr<'s>(&'s self, stream: &'s CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'s>) {
        self.view.device_ptr(stream)
    }
}

impl<T> DevicePtrMut<T> for CaptureViewMut<'_, T> {
    fn device_ptr_mut<'s>(
        &'s mut self,
        stream: &'s CudaStream,
    ) -> (sys::CUdeviceptr, SyncOnDrop<'s>) {
        self.view.device_ptr(stream)
    }
}

// Kernels launched in the work with cudarc's launch builder take the views
// as arguments (`.arg(&view)`, `.arg(&mut view_mut)`), as cudarc's own.

// (The builder's stream is private to cudarc: only the capture being in
// progress is checked.)

// SAFETY: pushes a pointer to the view's device address, which lives for
// 'b, as long as the builder's arguments ('b: 'a); no event is waited on or
// recorded (see the module docs).
unsafe impl<'a, 'b: 'a, 'c, T> PushKernelArg<&'b CaptureView<'c, T>> for LaunchArgs<'a> {
    fn arg(&mut self, arg: &'b CaptureView<'c, T>) -> &mut Self {
        arg.address(None);
        self.arg(&arg.ptr)
    }
}

// SAFETY: as above.
unsafe impl<'a, 'b: 'a, 'c, T> PushKernelArg<&'b CaptureViewMut<'c, T>> for LaunchArgs<'a> {
    fn arg(&mut self, arg: &'b CaptureViewMut<'c, T>) -> &mut Self {
        arg.view.address(None);
        self.arg(&arg.view.ptr)
    }
}

// SAFETY: as above.
unsafe impl<'a, 'b: 'a, 'c, T> PushKernelArg<&'b mut CaptureViewMut<'c, T>> for LaunchArgs<'a> {
    fn arg(&mut self, arg: &'b mut CaptureViewMut<'c, T>) -> &mut Self {
        arg.view.address(None);
        self.arg(&arg.view.ptr)
    }
}
