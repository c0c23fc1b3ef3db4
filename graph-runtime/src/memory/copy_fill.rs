//! Copy and fill nodes: what a copy may read and write (sealed operand
//! traits), the 3D copy the driver takes, fill values and the 8-byte fill
//! kernel.

use super::*;

impl<'a> Graph<'a> {
    /// Adds a copy node. The direction follows the operand types: device
    /// buffers ([`Buf`]) and host slices (`&[T]` to read, `&mut [T]` to write).
    ///
    /// # Errors
    /// As every node-adding method (see [`Graph`](crate::Graph#errors));
    /// [`GraphError::InvalidArguments`] for sizes that differ;
    /// [`GraphError::Unsupported`] for host memory where it cannot be (a
    /// conditional body) or page-locked host memory.
    pub fn add_copy<T: Pod>(
        &mut self,
        label: &str,
        src: impl CopySource<'a, T>,
        dst: impl CopyDestination<'a, T>,
        deps: &[Node],
    ) -> Result<Node> {
        let src = src.endpoint();
        let dst = dst.endpoint();
        crate::buffer::refuse_out_of_range(label, src.uses.iter().chain(&dst.uses))?;
        if src.len != dst.len {
            return Err(GraphError::arguments(
                label,
                crate::error::ArgumentRefusal::CopyLengths {
                    elements: src.len,
                    destination: dst.len,
                },
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
                return Err(GraphError::unsupported(
                    "add_copy",
                    Some(label),
                    Unsupported::HostCopyInBody,
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
        let node = self.add_raw(
            label.into(),
            NodeKind::Memcpy,
            deps,
            None,
            &uses,
            result::NodeParams::Generic(&mut params),
        )?;
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
            return Err(GraphError::unsupported(
                "add_copy",
                Some(label),
                Unsupported::PinnedHostCopy,
            ));
        }
        Ok(())
    }

    /// Adds a fill node writing `value` to every element of `dst` (see
    /// [`FillValue`] for how 8-byte values are written).
    ///
    /// # Errors
    /// As every node-adding method (see [`Graph`](crate::Graph#errors));
    /// [`GraphError::ReadOnlyWrite`] for a buffer bound
    /// read-only.
    pub fn add_fill<T: FillValue>(
        &mut self,
        label: &str,
        dst: Buf<'a, T>,
        value: T,
        deps: &[Node],
    ) -> Result<Node> {
        crate::buffer::refuse_out_of_range(label, &[dst.as_use(true)])?;
        if !dst.is_writable() {
            return Err(GraphError::ReadOnlyWrite {
                label: label.to_string(),
            });
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
            label.into(),
            NodeKind::Memset,
            deps,
            None,
            &[dst.as_use(true)],
            result::NodeParams::Generic(&mut params),
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
        let kernel = fill64(&self.ctx).map_err(|e| e.at_node(label))?;
        let n = dst.len() as u64;
        let blocks = n.div_ceil(256).clamp(1, 4096) as u32;
        let words: Buf<'a, u64> = dst.retyped();
        let node = self.add_kernel(
            label,
            kernel,
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
#[diagnostic::on_unimplemented(
    message = "a copy of `{T}` elements cannot write into `{Self}`",
    label = "not a destination for `{T}` elements",
    note = "a copy's source and destination must hold the same element type"
)]
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
        #[diagnostic::do_not_recommend]
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

fn fill64(ctx: &Arc<CudaContext>) -> Result<&'static crate::kernel::Kernel<Fill64>> {
    // SAFETY: matches `graph_runtime_fill64(unsigned long long*, unsigned
    // long long, unsigned long long)`; it writes x[..n], and the runtime
    // passes n = the buffer's length (see `add_fill`).
    const DECL: crate::kernel::KernelDecl<Fill64> =
        unsafe { crate::kernel::KernelDecl::cuda_c(FILL64_SOURCE, "graph_runtime_fill64") };
    static LOADED: crate::kernel::LoadedKernels<Fill64> = crate::kernel::LoadedKernels::new();
    LOADED.get_or_load(ctx, &DECL)
}
