//! Memory nodes: graph allocations (alloc and free nodes, with peer access),
//! copies and fills, and the device's graph-memory attributes and trim.

use crate::buffer::{AllocRef, Buf, BufferUse};
use crate::error::{DriverResultExt, GraphError, Result};
use crate::graph::{zeroed_params, AllocInfo, AllocOrigin, Graph};
use crate::host::{HostBuf, HostUse};
use crate::kernel::LaunchConfig;
use crate::node::{Node, NodeKind};
use crate::result;
use bytemuck::Pod;
use cudarc::driver::sys;
use cudarc::driver::CudaContext;
use std::sync::Arc;

/// Keeps the operand traits of copies implementable here only.
mod sealed {
    pub trait Operand {}
    impl<T> Operand for crate::buffer::Buf<'_, T> {}
    impl<T> Operand for &[T] {}
    impl<T> Operand for &Vec<T> {}
    impl<T> Operand for &mut [T] {}
    impl<T> Operand for &mut Vec<T> {}
    impl<T> Operand for &crate::host::HostBuf<T> {}

    /// Keeps the element types of fills implementable here only.
    pub trait Scalar {}

    /// Keeps allocation lengths to integers.
    pub trait Length {}
}

/// The element count of an alloc node in `cuda_graph!` (`f32[len]`): any
/// integer type, or a reference to one; never a float, which `as usize`
/// would truncate silently. A value that does not fit `usize` (a negative
/// one) becomes `usize::MAX`, which the alloc node refuses, naming itself.
/// Sealed.
#[diagnostic::on_unimplemented(
    message = "an allocation's length must be an integer, not `{Self}`",
    label = "the number of elements to allocate",
    note = "write an integer expression (u32, usize, ...), as in `f32[n]`"
)]
pub trait AllocLen: sealed::Length {
    fn to_len(self) -> usize;
}

macro_rules! alloc_len_for {
    ($($t:ty),*) => {$(
        impl sealed::Length for $t {}
        impl AllocLen for $t {
            #[inline(always)]
            fn to_len(self) -> usize {
                usize::try_from(self).unwrap_or(usize::MAX)
            }
        }
    )*};
}
alloc_len_for!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);

impl<L: AllocLen + Copy> sealed::Length for &L {}
impl<L: AllocLen + Copy> AllocLen for &L {
    #[inline(always)]
    fn to_len(self) -> usize {
        (*self).to_len()
    }
}

/// Options of a graph allocation.
#[derive(Debug, Clone, Default)]
pub struct AllocOptions {
    /// Other devices (ordinals) that may read and write the allocation.
    pub peer_access: Vec<usize>,
}

impl<'a> Graph<'a> {
    /// Adds an alloc node for `len` elements of `T`; the returned buffer may
    /// be used by nodes ordered after it, until a free node.
    pub fn add_alloc<T: Pod>(
        &mut self,
        label: &str,
        len: usize,
        deps: &[Node],
    ) -> Result<(Node, Buf<'a, T>)> {
        self.add_alloc_with(label, len, &AllocOptions::default(), deps)
    }

    /// [`Graph::add_alloc`] with options (peer access).
    pub fn add_alloc_with<T: Pod>(
        &mut self,
        label: &str,
        len: usize,
        options: &AllocOptions,
        deps: &[Node],
    ) -> Result<(Node, Buf<'a, T>)> {
        if self.is_body() {
            return Err(GraphError::invalid(
                label,
                "graph memory nodes cannot be inside a conditional body",
            ));
        }
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .filter(|&b| b > 0)
            .ok_or_else(|| {
                GraphError::invalid(
                    label,
                    format!(
                        "cannot allocate {len} elements of {} bytes",
                        std::mem::size_of::<T>()
                    ),
                )
            })?;
        // Refuse what can never fit here, where the error can name the node
        // (the physical memory is taken at launch, where it could not).
        let total = self.ctx.total_mem().op_at("cuDeviceTotalMem", label)?;
        if bytes > total {
            return Err(GraphError::invalid(
                label,
                format!("allocates {bytes} bytes, more than the device's {total} bytes of memory"),
            ));
        }
        let device = self.ctx.ordinal() as i32;
        let location = crate::result::device_location;
        let access: Vec<sys::CUmemAccessDesc> = options
            .peer_access
            .iter()
            .map(|&peer| sys::CUmemAccessDesc {
                location: location(peer as i32),
                flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            })
            .collect();
        let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEM_ALLOC);
        // SAFETY: zero is a valid bit pattern for the pool properties.
        let mut pool: sys::CUmemPoolProps = unsafe { std::mem::zeroed() };
        pool.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        pool.handleTypes = sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE;
        pool.location = location(device);
        params.__bindgen_anon_1.alloc = sys::CUDA_MEM_ALLOC_NODE_PARAMS_v2 {
            poolProps: pool,
            accessDescs: if access.is_empty() {
                std::ptr::null()
            } else {
                access.as_ptr()
            },
            accessDescCount: access.len(),
            bytesize: bytes,
            dptr: 0,
        };
        let node = self.add_raw(label, NodeKind::MemAlloc, deps, None, &[], &mut params)?;
        // SAFETY: the driver wrote the address into the alloc member.
        let ptr = unsafe { params.__bindgen_anon_1.alloc.dptr };
        let registry = &mut self.registry;
        let alloc = registry.allocs.len() as u32;
        registry.allocs.push(AllocInfo {
            origin: AllocOrigin::Node(node.index),
            ptr,
            freed_by: None,
            users: Vec::new(),
        });
        registry.nodes[node.index as usize]
            .allocs_before
            .push(alloc);
        Ok((node, self.allocation_buf(ptr, len, alloc)))
    }

    /// The buffer of this graph's allocation number `alloc`.
    fn allocation_buf<T>(&self, ptr: u64, len: usize, alloc: u32) -> Buf<'a, T> {
        let owner = AllocRef {
            graph: self.instance,
            index: alloc,
        };
        Buf::new(ptr, len, true, self.resource_id, Some(owner))
    }

    /// Records an allocation another graph made as one of this graph's,
    /// live from the start (see [`Graph::bind_escaped`]).
    pub(crate) fn register_escaped<T>(
        &mut self,
        state: &Arc<crate::escape::EscapeState>,
        len: usize,
    ) -> Buf<'a, T> {
        let registry = &mut self.registry;
        let alloc = registry.allocs.len() as u32;
        registry.allocs.push(AllocInfo {
            origin: AllocOrigin::Escaped(state.clone()),
            ptr: state.ptr,
            freed_by: None,
            users: Vec::new(),
        });
        self.allocation_buf(state.ptr, len, alloc)
    }

    /// Adds a free node for a graph allocation: one of this graph's alloc
    /// nodes, or one another graph made and this graph bound
    /// ([`Graph::bind_escaped`]). Every node that uses the buffer must be
    /// ordered before it (through `deps`).
    pub fn add_free<T>(&mut self, label: &str, buffer: Buf<'a, T>, deps: &[Node]) -> Result<Node> {
        if self.is_body() {
            return Err(GraphError::invalid(
                label,
                "graph memory nodes cannot be inside a conditional body",
            ));
        }
        let alloc = match buffer.as_use(true) {
            BufferUse {
                alloc: Some(alloc),
                root,
                ..
            } if root == self.resource_id && alloc.graph == self.instance => alloc.index,
            BufferUse { alloc: None, .. } => {
                return Err(GraphError::invalid(
                    label,
                    "only graph allocations can be freed by a free node",
                ))
            }
            _ => {
                return Err(GraphError::ForeignHandle {
                    what: format!("the buffer freed by `{label}`"),
                })
            }
        };
        {
            let registry = self.registry();
            let info =
                registry
                    .allocs
                    .get(alloc as usize)
                    .ok_or_else(|| GraphError::ForeignHandle {
                        what: format!("the allocation freed by `{label}`"),
                    })?;
            let alloc_label = registry.alloc_label(info);
            if buffer.device_ptr() != info.ptr {
                return Err(GraphError::invalid(
                    label,
                    format!("frees part of `{alloc_label}`; free the whole allocation"),
                ));
            }
            if let Some(first) = info.freed_by {
                return Err(GraphError::invalid(
                    label,
                    format!(
                        "`{alloc_label}` is already freed by `{}`",
                        registry.label(first as usize)
                    ),
                ));
            }
            // Everything that uses the buffer (and the alloc node) must be an
            // ancestor of the free node.
            let mut ancestor = vec![false; registry.nodes.len()];
            let mut stack: Vec<u32> = Vec::new();
            for dep in deps {
                if dep.graph == self.instance && (dep.index as usize) < ancestor.len() {
                    stack.push(dep.index);
                }
            }
            while let Some(n) = stack.pop() {
                if std::mem::replace(&mut ancestor[n as usize], true) {
                    continue;
                }
                stack.extend_from_slice(registry.deps(n as usize));
            }
            for &user in info.users.iter().chain(info.node().as_ref()) {
                if !ancestor[user as usize] {
                    let user_label = registry.label(user as usize);
                    return Err(GraphError::invalid(
                        label,
                        format!("frees `{alloc_label}` while `{user_label}` may still use it; make `{user_label}` a dependency of the free node"),
                    ));
                }
            }
        }
        let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEM_FREE);
        params.__bindgen_anon_1.free = sys::CUDA_MEM_FREE_NODE_PARAMS {
            dptr: buffer.device_ptr(),
        };
        let node = self.add_raw(label, NodeKind::MemFree, deps, None, &[], &mut params)?;
        self.registry.allocs[alloc as usize].freed_by = Some(node.index);
        Ok(node)
    }

    /// Adds a copy node. The direction follows the operand types: device
    /// buffers ([`Buf`]) and host slices (`&[T]` to read, `&mut [T]` to write).
    pub fn add_copy<T: Pod>(
        &mut self,
        label: &str,
        src: impl CopySource<'a, T>,
        dst: impl CopyDestination<'a, T>,
        deps: &[Node],
    ) -> Result<Node> {
        let src = src.endpoint();
        let dst = dst.endpoint();
        if src.len != dst.len {
            return Err(GraphError::invalid(
                label,
                format!(
                    "copies {} elements into a destination of {}",
                    src.len, dst.len
                ),
            ));
        }
        for (host, owned) in [&src, &dst]
            .map(|e| (e.host, e.host_use.is_some()))
            .into_iter()
            .filter(|(h, _)| !h.is_null())
        {
            if self.is_body() {
                // A body may run many times, or not at all, after the launch
                // call returned: host memory there would outlive its borrow.
                return Err(GraphError::invalid(
                    label,
                    "copies host memory inside a conditional body, which copies device memory only",
                ));
            }
            // A graph-owned host buffer is page-locked, and kept alive by
            // the graph until its work is done: only borrowed memory must be
            // pageable.
            if !owned {
                self.refuse_cuda_host_memory(label, host)?;
            }
        }
        let bytes = src.len * std::mem::size_of::<T>();
        let copy = memcpy3d(&src, &dst, bytes);
        let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEMCPY);
        params.__bindgen_anon_1.memcpy = sys::CUDA_MEMCPY_NODE_PARAMS {
            flags: 0,
            reserved: 0,
            copyCtx: self.ctx.cu_ctx(),
            copyParams: copy,
        };
        let uses: Vec<BufferUse> = src.uses.into_iter().chain(dst.uses).collect();
        let host_uses: Vec<HostUse> = src.host_use.into_iter().chain(dst.host_use).collect();
        self.check_host_uses(label, deps, &host_uses)?;
        let node = self.add_raw(label, NodeKind::Memcpy, deps, None, &uses, &mut params)?;
        self.record_host_uses(node, &host_uses);
        self.registry.host_copies |= !src.host.is_null() || !dst.host.is_null();
        Ok(node)
    }

    /// A copy node's host memory must be ordinary pageable memory. The
    /// driver copies page-locked, registered or managed memory
    /// asynchronously, so such memory could be freed (an exec forgotten
    /// with `mem::forget` ends the borrow without waiting) while a launch
    /// still copies it. Pageable copies complete before the launch call
    /// returns them to the caller's use (CUDA's synchronization rules for
    /// pageable transfers), so borrowing them for `'a` is enough.
    fn refuse_cuda_host_memory(&self, label: &str, host: *mut std::ffi::c_void) -> Result<()> {
        self.ctx.bind_to_thread().op_at("cuCtxSetCurrent", label)?;
        // SAFETY: the graph's context is current; the call only reads the
        // driver's records of the address.
        let known =
            unsafe { result::is_cuda_host_memory(host) }.op_at("cuPointerGetAttribute", label)?;
        if known {
            return Err(GraphError::invalid(
                label,
                "copies page-locked, registered or managed host memory, which a launch copies asynchronously \
                 and the graph cannot keep alive until the copy is done; copy from or into pageable memory \
                 (a Vec or slice) or a device buffer",
            ));
        }
        Ok(())
    }

    /// Adds a fill node writing `value` to every element of `dst` (see
    /// [`FillValue`] for how 8-byte values are written).
    pub fn add_fill<T: FillValue>(
        &mut self,
        label: &str,
        dst: Buf<'a, T>,
        value: T,
        deps: &[Node],
    ) -> Result<Node> {
        if !dst.is_writable() {
            return Err(GraphError::invalid(
                label,
                "fills a buffer bound read-only; bind it with `bind_mut`",
            ));
        }
        let bits = value.bits();
        let (value, element, count) = match std::mem::size_of::<T>() {
            8 if bits as u32 != (bits >> 32) as u32 => {
                return self.add_fill64(label, dst, bits, deps);
            }
            // Both halves equal: 4-byte elements, twice as many.
            8 => (bits as u32, 4, dst.len() * 2),
            size => (bits as u32, size as u32, dst.len()),
        };
        let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEMSET);
        params.__bindgen_anon_1.memset = sys::CUDA_MEMSET_NODE_PARAMS_v2 {
            dst: dst.device_ptr(),
            pitch: 0,
            value,
            elementSize: element,
            width: count,
            height: 1,
            ctx: self.ctx.cu_ctx(),
        };
        self.add_raw(
            label,
            NodeKind::Memset,
            deps,
            None,
            &[dst.as_use(true)],
            &mut params,
        )
    }

    /// An 8-byte fill whose halves differ: a kernel node.
    fn add_fill64<T>(
        &mut self,
        label: &str,
        dst: Buf<'a, T>,
        bits: u64,
        deps: &[Node],
    ) -> Result<Node> {
        let kernel = fill64(&self.ctx).map_err(|e| {
            GraphError::invalid(
                label,
                format!("the 8-byte fill kernel could not be loaded: {e}"),
            )
        })?;
        let n = dst.len() as u64;
        let blocks = n.div_ceil(256).clamp(1, 4096) as u32;
        let words: Buf<'a, u64> = dst.retyped();
        let node = self.add_kernel(
            label,
            &kernel,
            LaunchConfig::new(blocks, 256),
            (words, bits, n),
            deps,
        )?;
        Ok(node.node())
    }
}

/// One side of a copy.
/// Named by the sealed copy traits' hidden method; not part of the API.
#[doc(hidden)]
#[derive(Debug)]
pub struct Endpoint {
    memory: sys::CUmemorytype,
    device: u64,
    host: *mut std::ffi::c_void,
    len: usize,
    uses: Option<BufferUse>,
    host_use: Option<HostUse>,
}

/// What a copy may read: a device buffer or a host slice. Sealed: the
/// runtime alone says which memory a copy node may touch.
pub trait CopySource<'a, T: Pod>: sealed::Operand {
    #[doc(hidden)]
    fn endpoint(self) -> Endpoint;
}

/// What a copy may write: a writable device buffer or a mutable host slice.
/// Sealed, like [`CopySource`].
pub trait CopyDestination<'a, T: Pod>: sealed::Operand {
    #[doc(hidden)]
    fn endpoint(self) -> Endpoint;
}

impl<'a, T: Pod> CopySource<'a, T> for Buf<'a, T> {
    fn endpoint(self) -> Endpoint {
        Endpoint {
            memory: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            device: self.device_ptr(),
            host: std::ptr::null_mut(),
            len: self.len(),
            uses: Some(self.as_use(false)),
            host_use: None,
        }
    }
}

impl<'a, T: Pod> CopySource<'a, T> for &'a [T] {
    fn endpoint(self) -> Endpoint {
        Endpoint {
            memory: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
            device: 0,
            host: self.as_ptr() as *mut std::ffi::c_void,
            len: self.len(),
            uses: None,
            host_use: None,
        }
    }
}

impl<'a, T: Pod> CopySource<'a, T> for &'a Vec<T> {
    fn endpoint(self) -> Endpoint {
        self.as_slice().endpoint()
    }
}

impl<'a, T: Pod> CopyDestination<'a, T> for Buf<'a, T> {
    fn endpoint(self) -> Endpoint {
        Endpoint {
            memory: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            device: self.device_ptr(),
            host: std::ptr::null_mut(),
            len: self.len(),
            // A read-only destination is rejected when the use is checked.
            uses: Some(self.as_use(true)),
            host_use: None,
        }
    }
}

impl<'a, T: Pod> CopyDestination<'a, T> for &'a mut [T] {
    fn endpoint(self) -> Endpoint {
        Endpoint {
            memory: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
            device: 0,
            host: self.as_mut_ptr().cast(),
            len: self.len(),
            uses: None,
            host_use: None,
        }
    }
}

impl<'a, T: Pod> CopyDestination<'a, T> for &'a mut Vec<T> {
    fn endpoint(self) -> Endpoint {
        self.as_mut_slice().endpoint()
    }
}

impl<'a, T: Pod> CopySource<'a, T> for &HostBuf<T> {
    fn endpoint(self) -> Endpoint {
        Endpoint {
            memory: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
            device: 0,
            host: self.host_ptr(),
            len: self.len(),
            uses: None,
            host_use: Some(self.host_use(false)),
        }
    }
}

impl<'a, T: Pod> CopyDestination<'a, T> for &HostBuf<T> {
    fn endpoint(self) -> Endpoint {
        Endpoint {
            memory: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
            device: 0,
            host: self.host_ptr(),
            len: self.len(),
            uses: None,
            host_use: Some(self.host_use(true)),
        }
    }
}

/// A 1D copy with every field of CUDA_MEMCPY3D set (it has no valid zero:
/// `CUmemorytype` has no 0 value).
fn memcpy3d(src: &Endpoint, dst: &Endpoint, bytes: usize) -> sys::CUDA_MEMCPY3D {
    sys::CUDA_MEMCPY3D {
        srcXInBytes: 0,
        srcY: 0,
        srcZ: 0,
        srcLOD: 0,
        srcMemoryType: src.memory,
        srcHost: src.host,
        srcDevice: src.device,
        srcArray: std::ptr::null_mut(),
        reserved0: std::ptr::null_mut(),
        srcPitch: 0,
        srcHeight: 0,
        dstXInBytes: 0,
        dstY: 0,
        dstZ: 0,
        dstLOD: 0,
        dstMemoryType: dst.memory,
        dstHost: dst.host,
        dstDevice: dst.device,
        dstArray: std::ptr::null_mut(),
        reserved1: std::ptr::null_mut(),
        dstPitch: 0,
        dstHeight: 0,
        WidthInBytes: bytes,
        Height: 1,
        Depth: 1,
    }
}

/// Element types a fill node can write: 1, 2 and 4-byte scalars (a memset
/// node), and 8-byte ones (a memset node of 4-byte elements when both halves
/// of the value are equal, as for zero; otherwise a kernel node of the
/// runtime's own, legal wherever a memset is, in conditional bodies and
/// device-launch graphs too). Sealed: a fill writes the value's bytes into
/// every element, so only the runtime's own plain-data impls may say what
/// those bytes are.
#[diagnostic::on_unimplemented(
    message = "a fill cannot write `{Self}`: it writes 1, 2, 4 and 8-byte integers and floats",
    label = "not a value a fill node can write",
    note = "fill a buffer of another element type with a kernel node"
)]
pub trait FillValue: Pod + sealed::Scalar {
    /// The value's bits, widened to 8 bytes (its size is `size_of::<Self>()`).
    #[doc(hidden)]
    fn bits(self) -> u64;
}

macro_rules! fill_values {
    ($($t:ty => $bits:expr),*) => {$(
        impl sealed::Scalar for $t {}
        impl FillValue for $t {
            fn bits(self) -> u64 {
                #[allow(clippy::redundant_closure_call)]
                ($bits)(self)
            }
        }
    )*};
}
fill_values!(
    u8 => |v: u8| u64::from(v),
    i8 => |v: i8| u64::from(v as u8),
    u16 => |v: u16| u64::from(v),
    i16 => |v: i16| u64::from(v as u16),
    u32 => |v: u32| u64::from(v),
    i32 => |v: i32| u64::from(v as u32),
    f32 => |v: f32| u64::from(v.to_bits()),
    u64 => |v: u64| v,
    i64 => |v: i64| v as u64,
    f64 => |v: f64| v.to_bits()
);

/// The runtime's 8-byte fill, for values whose halves differ.
const FILL64_SOURCE: &str = r#"extern "C" __global__ void graph_runtime_fill64(
    unsigned long long* x, unsigned long long value, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        x[i] = value;
}"#;

type Fill64 = (crate::kernel::Out<u64>, u64, u64);

fn fill64(ctx: &Arc<CudaContext>) -> Result<crate::kernel::Kernel<Fill64>> {
    // SAFETY: matches `graph_runtime_fill64(unsigned long long*, unsigned
    // long long, unsigned long long)`; it writes x[..n], and the runtime
    // passes n = the buffer's length (see `add_fill`).
    const DECL: crate::kernel::KernelDecl<Fill64> =
        unsafe { crate::kernel::KernelDecl::cuda_c(FILL64_SOURCE, "graph_runtime_fill64") };
    static LOADED: crate::kernel::LoadedKernels<Fill64> = crate::kernel::LoadedKernels::new();
    LOADED.get_or_load(ctx, &DECL)
}

/// Graph memory in use and reserved on a device (`cuDeviceGetGraphMemAttribute`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphMemUsage {
    pub used_current: u64,
    pub used_high: u64,
    pub reserved_current: u64,
    pub reserved_high: u64,
}

/// Reads the graph-memory attributes of `ctx`'s device.
pub fn graph_mem_usage(ctx: &Arc<CudaContext>) -> Result<GraphMemUsage> {
    use sys::CUgraphMem_attribute as A;
    ctx.bind_to_thread().op("cuCtxSetCurrent")?;
    let device = ctx.cu_device();
    let read = |attr| {
        // SAFETY: a valid device, and these attributes are 64-bit values.
        let value = unsafe { result::graph_mem_attribute(device, attr) };
        value.op("cuDeviceGetGraphMemAttribute")
    };
    Ok(GraphMemUsage {
        used_current: read(A::CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT)?,
        used_high: read(A::CU_GRAPH_MEM_ATTR_USED_MEM_HIGH)?,
        reserved_current: read(A::CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT)?,
        reserved_high: read(A::CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)?,
    })
}

/// Resets the used and reserved high watermarks of `ctx`'s device.
pub fn reset_graph_mem_high(ctx: &Arc<CudaContext>) -> Result<()> {
    use sys::CUgraphMem_attribute as A;
    ctx.bind_to_thread().op("cuCtxSetCurrent")?;
    for attr in [
        A::CU_GRAPH_MEM_ATTR_USED_MEM_HIGH,
        A::CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH,
    ] {
        // SAFETY: a valid device; these attributes accept a reset to zero.
        unsafe { result::reset_graph_mem_attribute(ctx.cu_device(), attr) }
            .op("cuDeviceSetGraphMemAttribute")?;
    }
    Ok(())
}

/// Returns unused graph memory of `ctx`'s device to the OS.
pub fn trim_graph_memory(ctx: &Arc<CudaContext>) -> Result<()> {
    ctx.bind_to_thread().op("cuCtxSetCurrent")?;
    // SAFETY: a valid device.
    unsafe { result::graph_mem_trim(ctx.cu_device()) }.op("cuDeviceGraphMemTrim")
}
