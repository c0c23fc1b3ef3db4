//! Memory a graph touches. A cudarc `CudaSlice` is bound to a graph for the
//! graph's lifetime `'a` (shared for reading, exclusive for writing) and used
//! in nodes through a copyable [`Buf`] handle; at every launch the exec waits
//! for the slice's pending cudarc work and records its own use, so cudarc's
//! per-slice event tracking stays correct across streams.

use crate::ranks::{self, Rank, Ranked};
use cudarc::driver::{
    sys, CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DriverError,
    SyncOnDrop,
};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard};

/// A buffer's device address, read without a use: cudarc hands it out
/// with a guard that would record one, which is dropped unrecorded (its
/// wait, on the buffer's own stream, orders nothing new). Nodes and
/// launches record their uses themselves.
pub(crate) fn untracked_address<T>(buffer: &(impl DevicePtr<T> + ?Sized)) -> u64 {
    let (ptr, guard) = buffer.device_ptr(buffer.stream());
    std::mem::forget(guard);
    ptr
}

/// Marks a `Buf` as borrowing for `'a` and typed by `T`.
type Borrow<'a, T> = PhantomData<(&'a (), fn() -> T)>;

/// A handle to device memory a graph may use: a bound `CudaSlice` or a graph
/// allocation. Copy it freely; it cannot outlive the borrow behind it.
pub struct Buf<'a, T> {
    ptr: u64,
    len: usize,
    writable: bool,
    root: u64,
    alloc: Option<AllocRef>,
    /// Made by `slice`: a part, which a `#[disjoint]` block's check
    /// compares (a whole buffer may be indexed into: on trust).
    part: bool,
    _borrow: Borrow<'a, T>,
}

/// Which graph allocation a buffer is: the graph whose registry records it
/// (a root graph's unique instance) and its index there. Unique across
/// graphs, also those that share bound buffers (`new_sharing`, children).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AllocRef {
    pub graph: u64,
    pub index: u32,
}

impl<T> Clone for Buf<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Buf<'_, T> {}

impl<T> std::fmt::Debug for Buf<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buf")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.len)
            .field("writable", &self.writable)
            .field("graph_alloc", &self.alloc.is_some())
            .finish()
    }
}

impl<'a, T> Buf<'a, T> {
    /// # Panics
    /// When `len` elements of `T` span more bytes than `usize` holds: the
    /// runtime's own allocations check their size, but cudarc computes a
    /// slice's unchecked (a huge `alloc_zeros` length wraps to a small
    /// allocation), and every check of a kernel's counts trusts the length.
    #[track_caller]
    pub(crate) fn new(
        ptr: u64,
        len: usize,
        writable: bool,
        root: u64,
        alloc: Option<AllocRef>,
    ) -> Self {
        assert!(
            len.checked_mul(std::mem::size_of::<T>()).is_some(),
            "a buffer of {len} elements of {} bytes spans more bytes than the address space \
             (cudarc computes a slice's size unchecked): refused",
            std::mem::size_of::<T>()
        );
        Buf {
            ptr,
            len,
            writable,
            root,
            alloc,
            part: false,
            _borrow: PhantomData,
        }
    }

    /// Number of elements. (These three take `self`, as `slice` does: a
    /// trait's method of the same name taking `self` would otherwise be
    /// chosen over them, and the race check reads `x.len()` in a graph
    /// as no access to `x`.)
    pub fn len(self) -> usize {
        self.len
    }

    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn num_bytes(self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// The device address.
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }

    /// Whether nodes may write it.
    pub fn is_writable(&self) -> bool {
        self.writable
    }

    /// Elements `range` of this buffer (like cudarc's `CudaSlice::slice`).
    ///
    /// A range not within the buffer gives an empty buffer that every node
    /// and update refuses with [`GraphError::InvalidArguments`](crate::GraphError::InvalidArguments)
    /// naming the node, instead of a panic: in a repeated block, a count
    /// too large for the buffer's parts (`x.slice(w * 32..(w + 1) * 32)`
    /// for one lane too many) is then a build error naming the iteration.
    /// [`Buf::try_slice`] says None instead.
    pub fn slice(self, range: std::ops::Range<usize>) -> Self {
        self.try_slice(range).unwrap_or(Buf {
            len: 0,
            root: crate::ids::OUT_OF_RANGE_ROOT,
            alloc: None,
            ..self
        })
    }

    /// Elements `range` of this buffer, or None if out of bounds (like
    /// cudarc's `CudaSlice::try_slice`).
    pub fn try_slice(self, range: std::ops::Range<usize>) -> Option<Self> {
        if range.start > range.end || range.end > self.len {
            return None;
        }
        Some(Buf {
            ptr: self.ptr + (range.start * std::mem::size_of::<T>()) as u64,
            len: range.end - range.start,
            part: true,
            ..self
        })
    }

    /// The same memory seen as elements of `U` (of the same size: the
    /// runtime's 8-byte fill writes any 8-byte element type as u64).
    pub(crate) fn retyped<U>(self) -> Buf<'a, U> {
        debug_assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<U>());
        Buf {
            ptr: self.ptr,
            len: self.len,
            writable: self.writable,
            root: self.root,
            alloc: self.alloc,
            part: self.part,
            _borrow: PhantomData,
        }
    }

    pub(crate) fn as_use(&self, write: bool) -> BufferUse {
        BufferUse {
            root: self.root,
            alloc: self.alloc,
            write,
            writable: self.writable,
            bytes: (self.ptr, self.ptr.saturating_add(self.num_bytes() as u64)),
            part: self.part,
        }
    }
}

/// Whether a use is of a part sliced past its buffer's end (`Buf::slice`).
#[inline]
pub(crate) fn any_out_of_range<'u>(uses: impl IntoIterator<Item = &'u BufferUse>) -> bool {
    uses.into_iter()
        .any(|u| u.root == crate::ids::OUT_OF_RANGE_ROOT)
}

/// Refuses, for node `label`, a use of a part sliced past its buffer's end
/// (`Buf::slice`): every node, update and stream launch checks it before
/// the lengths, which the empty part would misreport.
#[inline]
pub(crate) fn refuse_out_of_range<'u>(
    label: impl std::fmt::Display,
    uses: impl IntoIterator<Item = &'u BufferUse>,
) -> crate::Result<()> {
    match any_out_of_range(uses) {
        true => Err(part_past_end(&label)),
        false => Ok(()),
    }
}

#[cold]
fn part_past_end(label: &dyn std::fmt::Display) -> crate::GraphError {
    crate::GraphError::arguments(
        &label.to_string(),
        crate::error::ArgumentRefusal::PartPastEnd,
    )
}

/// How a node uses a buffer, for the graph's ownership and ordering checks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BufferUse {
    pub root: u64,
    pub alloc: Option<AllocRef>,
    pub write: bool,
    pub writable: bool,
    /// The device addresses it spans, [start, end).
    pub bytes: (u64, u64),
    /// A part of a buffer (`Buf::slice`), not a whole one.
    pub part: bool,
}

/// A bound cudarc slice, tracked at every launch.
pub(crate) enum Binding<'a> {
    /// With the slice's read event.
    Read(&'a (dyn TrackedRead + 'a), UseEvent),
    /// With the slice's device address, to find it again (`bound_mut`),
    /// and its write event.
    Write(u64, &'a mut (dyn TrackedWrite + 'a), UseEvent),
}

/// The cudarc event a launch records its use of a bound slice in (the read
/// event of a slice bound for reading, the write event of one bound for
/// writing), taken once when the slice is bound; None where cudarc made
/// none (tracking was off when the slice was allocated). The event belongs
/// to the slice, which the binding borrows for `'a`: it is neither dropped
/// nor replaced meanwhile (cudarc creates a slice's events with it).
///
/// `stale` marks a slice that work outside the set's launches may have
/// touched since its last one (a `bound_mut` view): its next launch waits
/// through cudarc again.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UseEvent {
    event: Option<sys::CUevent>,
    pub stale: bool,
}

// SAFETY: an event handle has no thread affinity; the binding that holds it
// is Send or Sync as its slice is.
unsafe impl Send for UseEvent {}
// SAFETY: as above; the handle is only read.
unsafe impl Sync for UseEvent {}

impl UseEvent {
    /// The event a cudarc guard would record on drop, taken out of it so
    /// that dropping it records nothing.
    pub(crate) fn take(mut guard: SyncOnDrop<'_>) -> Self {
        let event = match &mut guard {
            SyncOnDrop::Record(target) => target.take().map(|(event, _)| event.cu_event()),
            SyncOnDrop::Sync(_) => None,
        };
        UseEvent { event, stale: true }
    }

    /// The read event of a slice bound for reading.
    pub(crate) fn read_of<T>(slice: &CudaSlice<T>) -> Self {
        // cudarc's read access makes the slice's own stream wait for its
        // last write (already ordered there) and hands out the read event.
        Self::take(slice.device_ptr(slice.stream()).1)
    }

    /// The write event of a slice bound for writing.
    pub(crate) fn write_of<T>(slice: &mut CudaSlice<T>) -> Self {
        let stream = slice.stream().clone();
        let event = Self::take(slice.device_ptr_mut(&stream).1);
        event
    }

    /// Records `stream`'s work so far in the event. If the record fails,
    /// the host waits for that work instead (so cudarc work that waits for
    /// the event's older record still follows it), and the record's error
    /// is returned.
    pub(crate) fn record(self, stream: &CudaStream) -> std::result::Result<(), DriverError> {
        let Some(event) = self.event else {
            return Ok(());
        };
        // SAFETY: the event is the bound slice's (alive for the binding);
        // the stream is live and of the same context, which the launch
        // bound to this thread.
        let recorded = unsafe { cudarc::driver::result::event::record(event, stream.cu_stream()) };
        if recorded.is_err() {
            let waited =
                crate::result::with_relaxed_capture_mode(|| crate::result::synchronize(stream));
            stream.context().record_err(waited);
        }
        recorded
    }
}

impl std::fmt::Debug for Binding<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Binding::Read(..) => "Binding::Read",
            Binding::Write(..) => "Binding::Write",
        })
    }
}

impl Binding<'_> {
    /// Makes `stream` wait for the slice's pending cudarc work; the guard
    /// records this use when dropped (after the launch is enqueued).
    pub(crate) fn acquire<'s>(&'s mut self, stream: &'s CudaStream) -> SyncOnDrop<'s> {
        match self {
            Binding::Read(slice, _) => slice.acquire_read(stream),
            Binding::Write(_, slice, _) => slice.acquire_write(stream),
        }
    }

    pub(crate) fn use_event(&mut self) -> &mut UseEvent {
        match self {
            Binding::Read(_, event) | Binding::Write(_, _, event) => event,
        }
    }
}

/// A slice whose reads are tracked by cudarc.
pub(crate) trait TrackedRead: Sync {
    fn acquire_read<'s>(&'s self, stream: &'s CudaStream) -> SyncOnDrop<'s>;
}

/// A slice whose writes are tracked by cudarc.
pub(crate) trait TrackedWrite: Send {
    fn acquire_write<'s>(&'s mut self, stream: &'s CudaStream) -> SyncOnDrop<'s>;
    /// The slice itself, to hand out views of it between launches.
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

impl<T> TrackedRead for CudaSlice<T> {
    fn acquire_read<'s>(&'s self, stream: &'s CudaStream) -> SyncOnDrop<'s> {
        self.device_ptr(stream).1
    }
}

impl<T: 'static> TrackedWrite for CudaSlice<T> {
    fn acquire_write<'s>(&'s mut self, stream: &'s CudaStream) -> SyncOnDrop<'s> {
        self.device_ptr_mut(stream).1
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// A slice bound with `bind_mut`, reached through an exec between launches
/// ([`Exec::bound_mut`](crate::Exec::bound_mut)): views of the range a
/// [`Buf`] names, for cudarc's copies and kernels. cudarc's event tracking
/// orders their work after the exec's launches (with tracking off, that is
/// the caller's: synchronize first).
///
/// While it lives, the graph's resources are lent out: the exec itself is
/// borrowed, and launches of other execs that share them (and other loans)
/// are refused with [`GraphError::BufferLent`](crate::GraphError::BufferLent).
/// No lock is held meanwhile. It hands out views, never `&mut CudaSlice`
/// (which `mem::swap` could replace under the graph's nodes).
pub struct BoundMut<'e, 'a, T> {
    resources: &'e Mutex<Resources<'a>>,
    slice: std::ptr::NonNull<CudaSlice<T>>,
    range: std::ops::Range<usize>,
    _exclusive: PhantomData<&'e mut CudaSlice<T>>,
}

impl<T> Drop for BoundMut<'_, '_, T> {
    fn drop(&mut self) {
        lock(self.resources).lent = false;
    }
}

impl<T> std::fmt::Debug for BoundMut<'_, '_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundMut")
            .field("range", &self.range)
            .finish()
    }
}

impl<'e, 'a, T: 'static> BoundMut<'e, 'a, T> {
    /// The bound slice behind `buf` in `resources`, if it was bound with
    /// `bind_mut` there, lent out (`Err(())` while another is).
    pub(crate) fn find(
        set: &'e Mutex<Resources<'a>>,
        buf: &Buf<'_, T>,
    ) -> std::result::Result<Option<Self>, ()> {
        let mut found = None;
        let mut resources = lock(set);
        if resources.lent {
            return Err(());
        }
        for binding in resources.bindings.iter_mut() {
            let Binding::Write(base, slice, event) = binding else {
                continue;
            };
            let base = *base;
            let Some(slice) = slice.as_any_mut().downcast_mut::<CudaSlice<T>>() else {
                continue;
            };
            let size = std::mem::size_of::<T>().max(1) as u64;
            let end = base + (slice.len() as u64) * size;
            if buf.device_ptr() >= base && buf.device_ptr() + (buf.len() as u64) * size <= end {
                let start = ((buf.device_ptr() - base) / size) as usize;
                found = Some((std::ptr::NonNull::from(slice), start..start + buf.len()));
                // The caller's cudarc work on the views records the slice's
                // events on its streams: the next launch must wait for them.
                event.stale = true;
                break;
            }
        }
        let Some((slice, range)) = found else {
            return Ok(None);
        };
        resources.lent = true;
        Ok(Some(BoundMut {
            resources: set,
            slice,
            range,
            _exclusive: PhantomData,
        }))
    }

    /// Number of elements in the view.
    pub fn len(&self) -> usize {
        self.range.len()
    }

    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }

    /// A view to read (`stream.clone_dtoh(&bound.view())`, say).
    pub fn view(&self) -> CudaView<'_, T> {
        // SAFETY: the slice is the one the graph borrowed mutably for 'a,
        // which outlives this value; the resources are lent to this value
        // (every other path to the slice, launches included, refuses while
        // they are) and the exec is borrowed.
        let slice = unsafe { self.slice.as_ref() };
        slice.slice(self.range.clone())
    }

    /// A view to write (`stream.memcpy_htod(&host, &mut bound.view_mut())`).
    pub fn view_mut(&mut self) -> CudaViewMut<'_, T> {
        // SAFETY: as for `view`, and `&mut self` makes this the only view.
        let slice = unsafe { self.slice.as_mut() };
        slice.slice_mut(self.range.clone())
    }
}

/// What a graph keeps of an exec its kernels may launch from the device:
/// the handle, and the exec's bound slices, tracked at every launch of the
/// launching graph like its own.
#[derive(Clone)]
pub(crate) struct DeviceTarget<'a> {
    /// Held, never read: the exec's handle (its `RawExec`) must outlive
    /// every launch of the launching graph.
    pub _exec: Arc<dyn std::any::Any + Send + Sync>,
    pub tracking: Arc<dyn ResourceSet + 'a>,
    /// The exec's `CudaContext` value, by address (kept alive by `_exec`):
    /// its slices are tracked by that value, which a launching graph of
    /// another value would count streams apart from.
    pub context: usize,
}

impl DeviceTarget<'_> {
    /// Whether the exec is of `ctx` (the very value: `Arc::ptr_eq`).
    pub(crate) fn is_of(&self, ctx: &Arc<cudarc::driver::CudaContext>) -> bool {
        self.context == Arc::as_ptr(ctx) as usize
    }

    /// Whether `other` keeps the same exec handle tracking the same set.
    pub(crate) fn same_as(&self, other: &DeviceTarget<'_>) -> bool {
        std::ptr::addr_eq(Arc::as_ptr(&self._exec), Arc::as_ptr(&other._exec))
            && std::ptr::addr_eq(Arc::as_ptr(&self.tracking), Arc::as_ptr(&other.tracking))
    }
}

/// What keeps a graph's references valid: bound slices, the kernels' modules
/// (through their functions), the resources of child graphs, and the execs
/// its kernels launch from the device. Shared by a graph, its clones and its
/// execs.
#[derive(Default)]
pub(crate) struct Resources<'a> {
    pub bindings: Vec<Binding<'a>>,
    pub functions: Vec<cudarc::driver::CudaFunction>,
    /// Resources of child graphs (flattened, no duplicates).
    pub children: Vec<SharedResources<'a>>,
    /// Execs launched from the device by this graph's kernels.
    pub device_targets: Vec<DeviceTarget<'a>>,
    /// The stream of the last tracked launch of these bindings: a launch on
    /// it is ordered after that one by the stream, and after every earlier
    /// cudarc use by that one's waits, so it only records the bindings
    /// nothing else touched since (those not `stale`).
    pub tracked_on: Option<Arc<CudaStream>>,
    /// Allocations other graphs made, bound here (`bind_escaped`): freed
    /// when the last of the graph and its execs is gone, unless a free
    /// node did it.
    pub escapes: Vec<crate::escape::Held>,
    /// A slice of these bindings is lent out by a `BoundMut`: launches
    /// that track this set, and other loans, are refused meanwhile.
    pub lent: bool,
    /// Device buffers the graph owns (`Graph::add_buffer`), if any.
    pub owned: Option<crate::owned::OwnedBuffers>,
}

impl std::fmt::Debug for Resources<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resources")
            .field("bindings", &self.bindings.len())
            .field("functions", &self.functions.len())
            .field("children", &self.children.len())
            .field("device_targets", &self.device_targets.len())
            .finish()
    }
}

pub(crate) type SharedResources<'a> = Arc<Mutex<Resources<'a>>>;

/// A resource set as a launch sees it: type-erased, so that an exec a
/// graph launches from the device, borrowed for another lifetime, can be
/// tracked with the graph's own set. The launch protocol (`ordering`)
/// implements it.
pub(crate) trait ResourceSet: Send + Sync {
    /// The set's identity (its address): orders its lock among others.
    fn key(&self) -> usize;
    /// Adds the sets tracked with this one (its children's, and those of
    /// the execs its kernels launch from the device) to `out`.
    fn members<'s>(&self, out: &mut Vec<Arc<dyn ResourceSet + 's>>)
    where
        Self: 's;
    /// Locks the set for a launch.
    fn lock_set(&self) -> Box<dyn LockedSet + '_>;
}

/// A locked resource set, during a launch: waited for before it, recorded
/// after it (see `ordering`).
pub(crate) trait LockedSet {
    /// A slice of the set is lent out (`BoundMut`).
    fn lent(&self) -> bool;
    /// Makes `stream` wait for the set's pending cudarc work and the last
    /// use of its owned buffers; adds the events the launch must record
    /// to `records`. Calls `before_join` before its first wait through
    /// cudarc (for events anyone may have recorded, in a capture too: the
    /// wait may draw `stream` into it), and returns whether it made one.
    fn acquire(
        &mut self,
        stream: &Arc<CudaStream>,
        managing: bool,
        records: &mut Vec<UseEvent>,
        before_join: &mut dyn FnMut() -> crate::error::Result<()>,
    ) -> crate::error::Result<bool>;
    /// Notes a queued launch on `stream` as the set's last (`own`: a
    /// stream no caller gets, an exec's own, and whether it is known not
    /// to capture).
    fn launched_on(
        &mut self,
        stream: &Arc<CudaStream>,
        managing: bool,
        own: Option<&Arc<std::sync::atomic::AtomicBool>>,
    );
}

/// Locks a resource set (rank [`Rank::ResourceSet`](crate::ranks::Rank)).
pub(crate) fn lock<'r, 'a>(
    resources: &'r Mutex<Resources<'a>>,
) -> Ranked<MutexGuard<'r, Resources<'a>>> {
    ranks::lock(Rank::ResourceSet, resources)
}

#[cfg(test)]
mod tests;
