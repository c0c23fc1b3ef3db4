//! Declared kernels launched on a stream, outside any graph: one
//! declaration serves graphs and streams. A launch makes the checks a
//! kernel node makes (launch configuration, lengths and indices against the
//! buffers, no write through a read-only binding, buffers of this launch's
//! context), then orders itself with cudarc's event tracking of every
//! cudarc buffer it binds (waits for their pending work, records its own
//! use), as cudarc's launch builder does for its slices (an
//! [`Escaped`](crate::Escaped)'s use is ordered by the runtime's own
//! event instead), and makes each buffer's
//! own stream (where cudarc frees it) wait for the launch, which orders
//! the free even once cudarc has stopped tracking. The buffers are
//! cudarc's slices and views and [`Escaped`](crate::Escaped) allocations
//! only ([`StreamBuffer`], sealed): the launch trusts their addresses and
//! lengths.

use super::encode::MAX_PARAMS;
use super::*;
use crate::buffer::{untracked_address, UseEvent};
use crate::error::LaunchRefusal;
use crate::escape::UseRefused;
use crate::ids::{next_id, FOREIGN_ROOT};
use cudarc::driver::{
    CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceSlice, SyncOnDrop,
};
use std::ffi::c_void;

/// A launch of a declared kernel on a stream, being set up: bind the
/// buffers it takes (as a graph binds them), then [`launch`](Self::launch)
/// it with arguments of the declaration's types. Made by [`Kernel::on`].
///
/// ```no_run
/// use graph_runtime::kernel::KernelDef;
/// use graph_runtime::LaunchConfig;
/// # graph_runtime::declare_kernel! {
/// #     pub Scale: (graph_runtime::kernel::Out<f32>, f32, graph_runtime::kernel::Len) =
/// #         unsafe cuda_c("extern \"C\" __global__ void scale(float* x, float f, unsigned n) {
/// #             unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= f; }", "scale");
/// # }
/// # fn main() -> graph_runtime::Result<()> {
/// let ctx = graph_runtime::driver::context(0)?;
/// let stream = ctx.new_stream()?;
/// let mut x = stream.clone_htod(&[1.0f32, 2.0, 3.0])?;
/// let scale = Scale::load(&ctx)?;
///
/// let mut launch = scale.on(&stream);
/// let xb = launch.bind_mut(&mut x);
/// launch.launch(LaunchConfig::for_elements(3, 256), (xb, 2.0f32, 3))?;
///
/// assert_eq!(stream.clone_dtoh(&x)?, [2.0, 4.0, 6.0]);
/// # Ok(())
/// # }
/// ```
///
/// A count above a buffer's length, a buffer bound read-only passed to a
/// parameter that writes, or a buffer bound elsewhere (to a graph, to
/// another launch) is refused with [`GraphError::LaunchRefused`] before
/// anything is queued.
#[must_use = "nothing is launched until `launch` is called"]
pub struct StreamLaunch<'k, 'a, A> {
    kernel: &'k Kernel<A>,
    stream: &'a Arc<CudaStream>,
    /// Identifies the buffers bound here: a `Buf` of a graph or of another
    /// launch carries another root and is refused.
    root: u64,
    /// The bound buffers, each with the stream cudarc frees it on (none
    /// for an [`Escaped`](crate::Escaped): its free waits for its own
    /// event, which the launch's use records).
    bindings: Vec<Binding<'a>>,
    /// A bound cudarc buffer's own stream captured (or refused work
    /// because another stream captures) when it was bound: its address
    /// was not taken, and the launch is refused
    /// ([`LaunchRefusal::Capturing`] if that stream is the launch's,
    /// else [`LaunchRefusal::BufferStreamCapturing`]).
    home_refused: Option<LaunchRefusal>,
}

impl<A> std::fmt::Debug for StreamLaunch<'_, '_, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamLaunch")
            .field("kernel", &self.kernel.name())
            .field("bindings", &self.bindings.len())
            .finish()
    }
}

/// A bound buffer, with the stream that frees it without waiting for the
/// runtime's events (see [`sealed::Buffer::frees_on`]).
type Binding<'a> = (Box<dyn Acquire + 'a>, Option<Arc<CudaStream>>);

/// A bound buffer: makes a stream wait for its pending work and hands out
/// the guard that records the launch's use when dropped.
trait Acquire {
    fn acquire<'s>(&'s mut self, stream: &'s CudaStream) -> Result<StreamUse<'s>, UseRefused>;
}

/// A bound buffer's use by a stream launch: dropped after the launch is
/// queued, it records the use (cudarc's guard for cudarc's buffers; for
/// an [`Escaped`](crate::Escaped), the runtime's own record, made with the
/// driver directly: cudarc's guards skip theirs while an error is stored
/// in the context).
#[doc(hidden)]
#[derive(Debug)]
pub enum StreamUse<'s> {
    Cudarc(SyncOnDrop<'s>),
    Escaped(crate::escape::EscapedUse<'s>),
}

/// A buffer bound for reading ([`StreamBuffer`]).
struct Read<'a, S: ?Sized, T>(&'a S, PhantomData<fn() -> T>);

/// A buffer bound for writing ([`StreamBufferMut`]).
struct Write<'a, S: ?Sized, T>(&'a mut S, PhantomData<fn() -> T>);

impl<T, S: StreamBuffer<T> + ?Sized> Acquire for Read<'_, S, T> {
    fn acquire<'s>(&'s mut self, stream: &'s CudaStream) -> Result<StreamUse<'s>, UseRefused> {
        self.0.acquire_shared(stream, sealed::Token(()))
    }
}

impl<T, S: StreamBufferMut<T> + ?Sized> Acquire for Write<'_, S, T> {
    fn acquire<'s>(&'s mut self, stream: &'s CudaStream) -> Result<StreamUse<'s>, UseRefused> {
        self.0.acquire_exclusive(stream, sealed::Token(()))
    }
}

/// A buffer a stream launch binds for reading: cudarc's `CudaSlice`,
/// `CudaView` and `CudaViewMut`, and an [`Escaped`](crate::Escaped).
/// Sealed, and its methods with it: the launch trusts the address and
/// length they report, and the stream an `Escaped` reports may be one no
/// caller gets (an exec's own, [`Exec::launch_on_own_stream`](crate::Exec::launch_on_own_stream)).
pub trait StreamBuffer<T>: sealed::Buffer<T> {}

impl<T, S: sealed::Buffer<T> + ?Sized> StreamBuffer<T> for S {}

/// A buffer a stream launch binds for writing: a `CudaSlice`, a
/// `CudaViewMut`, an [`Escaped`](crate::Escaped). Sealed, as
/// [`StreamBuffer`].
pub trait StreamBufferMut<T>: StreamBuffer<T> + sealed::BufferMut<T> {}

impl<T, S: sealed::BufferMut<T> + ?Sized> StreamBufferMut<T> for S {}

/// The `StreamBuffer` impl of a cudarc buffer type: its own tracking.
macro_rules! cudarc_stream_buffer {
    ($($ty:ty),*) => {$(
        impl<T> sealed::Buffer<T> for $ty {
            fn address(&self) -> u64 {
                untracked_address(self)
            }
            fn elements(&self) -> usize {
                DeviceSlice::len(self)
            }
            fn home(&self, _: sealed::Token) -> &Arc<CudaStream> {
                DeviceSlice::stream(self)
            }
            fn frees_on(&self, _: sealed::Token) -> Option<&Arc<CudaStream>> {
                Some(DeviceSlice::stream(self))
            }
            fn acquire_shared<'s>(
                &'s self,
                stream: &'s CudaStream,
                _: sealed::Token,
            ) -> Result<StreamUse<'s>, UseRefused> {
                Ok(StreamUse::Cudarc(self.device_ptr(stream).1))
            }
        }
    )*};
}
cudarc_stream_buffer!(CudaSlice<T>, CudaView<'_, T>, CudaViewMut<'_, T>);

/// The `StreamBufferMut` impl of a writable cudarc buffer type.
macro_rules! cudarc_stream_buffer_mut {
    ($($ty:ty),*) => {$(
        impl<T> sealed::BufferMut<T> for $ty {
            fn acquire_exclusive<'s>(
                &'s mut self,
                stream: &'s CudaStream,
                _: sealed::Token,
            ) -> Result<StreamUse<'s>, UseRefused> {
                Ok(StreamUse::Cudarc(self.device_ptr_mut(stream).1))
            }
        }
    )*};
}
cudarc_stream_buffer_mut!(CudaSlice<T>, CudaViewMut<'_, T>);

impl<T> sealed::Buffer<T> for crate::Escaped<T> {
    fn address(&self) -> u64 {
        // Its fixed address, without the allocation's ordering (done at
        // the launch, where its use is recorded).
        crate::Escaped::device_ptr(self)
    }
    fn elements(&self) -> usize {
        self.len()
    }
    fn home(&self, _: sealed::Token) -> &Arc<CudaStream> {
        crate::Escaped::home(self)
    }
    fn frees_on(&self, _: sealed::Token) -> Option<&Arc<CudaStream>> {
        // Its free waits for its event, where the launch's use is recorded
        // (or, when the record fails, waited for): its home, maybe an
        // exec's own stream, need not join the launch stream, which
        // another thread sharing it may begin capturing meanwhile.
        None
    }
    fn acquire_shared<'s>(
        &'s self,
        stream: &'s CudaStream,
        _: sealed::Token,
    ) -> Result<StreamUse<'s>, UseRefused> {
        self.access(stream, false).map(StreamUse::Escaped)
    }
}
impl<T> sealed::BufferMut<T> for crate::Escaped<T> {
    fn acquire_exclusive<'s>(
        &'s mut self,
        stream: &'s CudaStream,
        _: sealed::Token,
    ) -> Result<StreamUse<'s>, UseRefused> {
        self.access(stream, true).map(StreamUse::Escaped)
    }
}

/// What a stream launch asks of a bound buffer. In a module no other crate
/// can name, so no other crate implements these traits; and the methods
/// that hand out a stream or order one take a [`sealed::Token`], so no
/// other crate calls them either (an `Escaped`'s `home` may be an exec's
/// own stream, which no caller may hold: see
/// [`Exec::launch_on_own_stream`](crate::Exec::launch_on_own_stream)).
mod sealed {
    use super::{StreamUse, UseRefused};
    use cudarc::driver::CudaStream;
    use std::sync::Arc;

    /// What every method takes: a value only this module's parent can
    /// make. Through a generic bound (`S: StreamBuffer<T>`) a supertrait's
    /// methods are callable even from crates that cannot name it; without
    /// a `Token` they cannot call these.
    #[derive(Debug, Clone, Copy)]
    pub struct Token(pub(super) ());

    pub trait Buffer<T> {
        /// Its address. (cudarc hands a slice's address out with a wait:
        /// it is asked on the slice's own stream, where its last write is
        /// already ordered, never on the launch stream, which may be
        /// capturing: a wait there would break the capture.)
        fn address(&self) -> u64;
        /// Its length in elements.
        fn elements(&self) -> usize;
        /// A stream of its context (for a slice, the one cudarc frees it
        /// on).
        fn home(&self, _: Token) -> &Arc<CudaStream>;
        /// The stream that frees it without waiting for the runtime's
        /// events, which must then join the launch: a slice's own
        /// (cudarc's tracking may be off by then); none for an `Escaped`.
        fn frees_on(&self, _: Token) -> Option<&Arc<CudaStream>>;
        /// Makes `stream` wait for its pending writes; the guard records
        /// the launch's read.
        fn acquire_shared<'s>(
            &'s self,
            stream: &'s CudaStream,
            _: Token,
        ) -> Result<StreamUse<'s>, UseRefused>;
    }

    pub trait BufferMut<T>: Buffer<T> {
        /// Makes `stream` wait for its pending reads and writes; the guard
        /// records the launch's write.
        fn acquire_exclusive<'s>(
            &'s mut self,
            stream: &'s CudaStream,
            _: Token,
        ) -> Result<StreamUse<'s>, UseRefused>;
    }
}

impl<A: KernelArgs> Kernel<A> {
    /// Sets up a launch of this kernel on `stream` (see [`StreamLaunch`]).
    pub fn on<'k, 'a>(&'k self, stream: &'a Arc<CudaStream>) -> StreamLaunch<'k, 'a, A> {
        StreamLaunch {
            kernel: self,
            stream,
            root: next_id(),
            bindings: Vec::new(),
            home_refused: None,
        }
    }
}

impl<'a, A: KernelArgs> StreamLaunch<'_, 'a, A> {
    /// Binds a buffer the kernel only reads: a `CudaSlice`, a `CudaView`
    /// or `CudaViewMut`, or an [`Escaped`](crate::Escaped) ([`StreamBuffer`]). The launch waits for its pending
    /// writes and records its read (an `Escaped` read, which may overlap
    /// another, is waited for instead: the launch returns once the kernel
    /// has run). A buffer of another context gives a
    /// `Buf` the launch refuses.
    pub fn bind<T: 'a, S: StreamBuffer<T>>(&mut self, buffer: &'a S) -> Buf<'a, T> {
        let (root, ptr, len, frees_on) = self.describe(buffer);
        if root != FOREIGN_ROOT {
            self.bindings
                .push((Box::new(Read(buffer, PhantomData)), frees_on));
        }
        Buf::new(ptr, len, false, root, None)
    }

    /// Binds a buffer the kernel may write: a `CudaSlice`, a `CudaViewMut`
    /// or an [`Escaped`](crate::Escaped), borrowed exclusively until the
    /// launch is queued. The launch waits for its pending reads and writes
    /// and records its write.
    pub fn bind_mut<T: 'a, S: StreamBufferMut<T>>(&mut self, buffer: &'a mut S) -> Buf<'a, T> {
        let (root, ptr, len, frees_on) = self.describe(&*buffer);
        if root != FOREIGN_ROOT {
            self.bindings
                .push((Box::new(Write(buffer, PhantomData)), frees_on));
        }
        Buf::new(ptr, len, true, root, None)
    }

    /// What a binding of `buffer` takes: its root (this launch's, or none
    /// for a buffer of another context), address, length, and the stream
    /// that frees it unordered.
    ///
    /// cudarc gives a slice's address only through `device_ptr`, which
    /// makes the slice's own stream wait for its last write. A stream that
    /// refuses that wait because of a capture (the legacy stream while
    /// another stream captures) stores the refusal in the context, where
    /// an unrelated later call would report it; and a capturing stream
    /// would record it. Such a launch is refused anyway
    /// ([`LaunchRefusal::BufferStreamCapturing`], or
    /// [`LaunchRefusal::Capturing`] when that stream is the launch's): the
    /// address of a buffer whose stream captures is not taken (0, never
    /// launched with). A capture begun between the question and
    /// `device_ptr` still stores the refusal (reported by the launch).
    fn describe<T, S: sealed::Buffer<T> + ?Sized>(
        &mut self,
        buffer: &S,
    ) -> (u64, u64, usize, Option<Arc<CudaStream>>) {
        let token = sealed::Token(());
        let home = buffer.home(token);
        let root = self.root_for(home);
        let frees_on = buffer.frees_on(token).cloned();
        // (A buffer of the per-thread default stream is refused as such.)
        let refuses = root != FOREIGN_ROOT
            && frees_on.is_some()
            && !crate::result::is_per_thread(home)
            && crate::result::bind(home.context()).is_ok()
            // SAFETY: the stream is live (held by the buffer), of the
            // context just made current.
            && matches!(unsafe { crate::result::is_capturing(home.cu_stream()) }, Ok(true));
        if refuses {
            self.home_refused = Some(match home.cu_stream() == self.stream.cu_stream() {
                true => LaunchRefusal::Capturing,
                false => LaunchRefusal::BufferStreamCapturing,
            });
            return (root, 0, buffer.elements(), frees_on);
        }
        (root, buffer.address(), buffer.elements(), frees_on)
    }

    /// The root of buffers of `home`'s context value: this launch's, or
    /// none (another context, or another `CudaContext` value of the
    /// stream's, whose tracking counts its streams apart).
    fn root_for(&self, home: &Arc<CudaStream>) -> u64 {
        if Arc::ptr_eq(home.context(), self.stream.context()) {
            self.root
        } else {
            FOREIGN_ROOT
        }
    }

    /// Checks the arguments as a kernel node's are checked, makes the
    /// stream wait for the bound buffers' pending work, queues the kernel
    /// and records its use of every bound buffer.
    ///
    /// # Errors
    /// [`GraphError::LaunchRefused`] for a launch configuration with a
    /// zero dimension or over 1,024 threads per block, a count or index
    /// past a buffer's end, a buffer bound read-only passed to a parameter
    /// that writes, a buffer not bound by this launch (bound to a graph,
    /// to another launch, or of another context), a conditional handle or
    /// exec argument (those are for graph nodes), a kernel loaded in
    /// another context, a buffer allocated on the per-thread default
    /// stream, a bound buffer's own stream that captures
    /// or refuses work while another stream captures (the legacy stream),
    /// or a capturing stream (capturing before the waits,
    /// or drawn by them into a capture another thread has not ended:
    /// [`LaunchRefusal::JoinedCapture`](crate::error::LaunchRefusal::JoinedCapture));
    /// [`GraphError::Driver`] when
    /// the driver refuses the launch.
    pub fn launch(mut self, config: LaunchConfig, args: A::Args<'a>) -> Result<()> {
        let name = self.kernel.name().to_string();
        let refused = |reason: LaunchRefusal| GraphError::LaunchRefused {
            kernel: name.clone(),
            reason,
        };
        if let Some(reason) = self.home_refused.take() {
            return Err(refused(reason));
        }
        let mut encoded = ArgEncoder::default();
        let encoding = A::encode(&args, &mut encoded)
            .and_then(|()| encoded.check_aliasing(self.kernel.is_no_alias()));
        // Before the bounds, which the part's length (0) would misreport.
        if crate::buffer::any_out_of_range(encoded.uses()) {
            let reason = crate::error::ArgumentRefusal::PartPastEnd;
            return Err(refused(LaunchRefusal::Arguments(reason)));
        }
        config
            .validate()
            .and(encoding)
            .and_then(|()| encoded.check_bounds(&config))
            .map_err(|reason| refused(LaunchRefusal::Arguments(reason)))?;
        if !encoded.conds().is_empty() || !encoded.execs().is_empty() {
            return Err(refused(LaunchRefusal::GraphOnlyArgument));
        }
        for (index, used) in encoded.uses().iter().enumerate() {
            if used.root != self.root {
                return Err(refused(LaunchRefusal::NotBound { argument: index }));
            }
            if used.write && !used.writable {
                return Err(refused(LaunchRefusal::ReadOnly { argument: index }));
            }
        }
        let ctx = self.stream.context();
        if self.kernel.is_of_other_context(ctx) {
            return Err(refused(LaunchRefusal::KernelOfOtherContext));
        }
        // The per-thread default stream names another stream on every
        // thread: a buffer of it may be freed (by cudarc, once its tracking
        // is off) on another thread's, which no join made here orders. (As
        // the launch stream it is this thread's, where the kernel runs and
        // the records go: accepted.)
        let per_thread = |home: &Option<Arc<CudaStream>>| {
            home.as_ref()
                .is_some_and(|home| crate::result::is_per_thread(home))
        };
        if self.bindings.iter().any(|(_, home)| per_thread(home)) {
            return Err(refused(LaunchRefusal::PerThreadBuffer));
        }
        ctx.bind_to_thread().op_at("cuCtxSetCurrent", &name)?;
        // `reason` refused if `stream` captures (or refuses the query
        // because another stream does), nothing otherwise.
        let capturing = |stream: &CudaStream, reason: LaunchRefusal| {
            // SAFETY: the stream is live (borrowed or held by a binding).
            match unsafe { crate::result::is_capturing(stream.cu_stream()) } {
                Ok(false) => None,
                Ok(true) => Some(refused(reason)),
                Err(e) => Some(GraphError::driver("cuStreamIsCapturing", e.0, Some(&name))),
            }
        };
        if let Some(error) = capturing(self.stream, LaunchRefusal::Capturing) {
            return Err(error);
        }
        let stream: &CudaStream = self.stream;
        // The buffers' own streams (where cudarc frees them), once each: a
        // capturing one (or one that refuses work while another stream
        // captures: the legacy stream) could not be made to follow the
        // kernel, so its free would not wait for it.
        let mut homes: Vec<Arc<CudaStream>> = Vec::new();
        for home in self.bindings.iter().filter_map(|(_, home)| home.as_ref()) {
            if home.cu_stream() != stream.cu_stream()
                && !homes.iter().any(|h| h.cu_stream() == home.cu_stream())
            {
                if let Some(error) = capturing(home, LaunchRefusal::BufferStreamCapturing) {
                    return Err(error);
                }
                homes.push(home.clone());
            }
        }
        // Waits now. After the launch is queued (or refused by the driver:
        // then the records cover earlier work, which orders nothing
        // wrongly), each cudarc slice's event is recorded by the driver
        // directly (cudarc's guard would skip its record while an error is
        // stored in the context), and each `Escaped`'s guard records or
        // waits. A use refused before the launch (an `Escaped`'s) forgets
        // the guards made: nothing is recorded for a launch not made.
        // (Only cudarc's buffers have a stream that frees them unordered.)
        let cudarc_waits = self.bindings.iter().any(|(_, frees_on)| frees_on.is_some());
        let mut events: Vec<UseEvent> = Vec::new();
        let mut guards: Vec<StreamUse<'_>> = Vec::new();
        let mut refusal = None;
        for (binding, _) in self.bindings.iter_mut() {
            match binding.acquire(stream) {
                Ok(StreamUse::Cudarc(guard)) => events.push(UseEvent::take(guard)),
                Ok(guard) => guards.push(guard),
                Err(UseRefused::Capturing) => {
                    refusal = Some(refused(LaunchRefusal::Capturing));
                    break;
                }
                Err(UseRefused::Error(error)) => {
                    refusal = Some(error);
                    break;
                }
            }
        }
        // cudarc's waits skip themselves while an error is stored in the
        // context (storing it again): one stored now means a wait may not
        // have been made, so nothing is launched (as `ordering::prepare`).
        if refusal.is_none() && cudarc_waits {
            if let Err(e) = ctx.check_err() {
                refusal = Some(GraphError::driver("cuStreamWaitEvent", e.0, Some(&name)));
            }
        }
        // cudarc's waits for a slice that another thread last used in a
        // capture it has not ended draw the stream into that capture: the
        // kernel would be recorded there.
        if refusal.is_none() && cudarc_waits {
            refusal = capturing(stream, LaunchRefusal::JoinedCapture);
        }
        if let Some(error) = refusal {
            std::mem::forget(guards);
            return Err(error);
        }
        let mut pointers = param_pointers(&encoded);
        let count = encoded.values().1.len();
        // SAFETY: the declaration (an `unsafe` promise) vouches that the
        // parameter types match the kernel and that it stays within what
        // the checks above bound: counts and indices within every buffer,
        // writes only to buffers bound for writing. Every buffer is bound
        // here, borrowed for 'a, and ordered by cudarc's events (recorded
        // after the launch, below), so cudarc frees none before the
        // kernel is done. The pointers point into `encoded`, alive for the
        // call; the function's module is kept by `self.kernel`; the
        // context is current and the stream is of it.
        let launched = unsafe {
            cudarc::driver::result::launch_kernel(
                self.kernel.function().cu_function(),
                (config.grid.x, config.grid.y, config.grid.z),
                (config.block.x, config.block.y, config.block.z),
                config.shared_mem_bytes,
                stream.cu_stream(),
                &mut pointers[..count],
            )
        };
        // Recorded whenever the slice has events and tracking is not
        // turned off (`disable_event_tracking`), even while this context
        // value tracks nothing (one stream): another value of the same
        // context, or a stream made later, turns it on.
        let mut recorded = Ok(());
        let events = match ctx.is_event_tracking() {
            true => events,
            false => Vec::new(),
        };
        for event in events {
            recorded = recorded.and(event.record(stream));
        }
        drop(guards);
        launched.op_at("cuLaunchKernel", &name)?;
        // A failed record was waited for on the host (`UseEvent::record`).
        let recorded = recorded.op_at("cuEventRecord", &name);
        // cudarc frees a slice on its own stream, waiting on its events
        // only while tracking is on, which it turns off for the whole
        // context once its last `new_stream` stream is dropped: the
        // buffers' own streams wait for the launch here (or the host does,
        // if one refuses the wait), so their frees are ordered after the
        // kernel whatever cudarc tracks then. Every home joined, even after
        // a failure: then the first error.
        let mut first_error = Ok(());
        for home in homes {
            // By the driver directly: cudarc's join returns an error another
            // thread stored instead of joining.
            // SAFETY: both streams are live (held, borrowed), of the current
            // context (bound above; bindings of other contexts are refused).
            let joined = unsafe { crate::result::join(home.cu_stream(), stream.cu_stream()) }
                .op_at("cuStreamWaitEvent", &name);
            if first_error.is_ok() {
                first_error = joined;
            }
        }
        recorded.and(first_error)
    }
}

/// One pointer per encoded parameter, to its first word: what a kernel
/// node's and a launch's `kernelParams` hold.
pub(crate) fn param_pointers(encoded: &ArgEncoder<'_>) -> [*mut c_void; MAX_PARAMS] {
    let (words, starts) = encoded.values();
    let mut pointers = [std::ptr::null_mut(); MAX_PARAMS];
    for (pointer, &start) in pointers.iter_mut().zip(starts) {
        // The driver only reads through these (it copies each parameter's
        // bytes), so pointing at the encoder's words is enough.
        *pointer = words[start as usize..].as_ptr().cast_mut().cast();
    }
    pointers
}
