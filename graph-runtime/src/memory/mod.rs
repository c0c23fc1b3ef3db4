//! Memory nodes: graph allocations (alloc and free nodes, with peer access),
//! copies and fills, and the device's graph-memory attributes and trim.

use crate::buffer::{lock, AllocRef, Buf, BufferUse};
use crate::error::{DriverResultExt, GraphError, OrderRule, Result, Unsupported};
use crate::escape::Escaped;
use crate::graph::{zeroed_params, AllocInfo, AllocOrigin, Graph, FOREIGN_ROOT};
use crate::host::{HostBuf, HostUse};
use crate::kernel::LaunchConfig;
use crate::node::{Node, NodeKind};
use crate::result;
use bytemuck::Pod;
use cudarc::driver::sys;
use cudarc::driver::CudaContext;
use std::sync::Arc;

mod copy_fill;
mod owned;

pub use owned::OwnedMut;

pub use copy_fill::{CopyDestination, CopySource, Endpoint, FillValue};

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
        #[diagnostic::do_not_recommend]
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
#[diagnostic::do_not_recommend]
impl<L: AllocLen + Copy> AllocLen for &L {
    #[inline(always)]
    fn to_len(self) -> usize {
        (*self).to_len()
    }
}

/// Options of a graph allocation: `AllocOptions::default()`, then the
/// builder methods.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct AllocOptions {
    /// Other devices (ordinals) that may read and write the allocation.
    pub peer_access: Vec<usize>,
}

impl AllocOptions {
    /// Lets the devices with these ordinals read and write the allocation
    /// (replacing any list set before).
    #[must_use]
    pub fn peer_access(mut self, devices: impl IntoIterator<Item = usize>) -> Self {
        self.peer_access = devices.into_iter().collect();
        self
    }
}

impl<'a> Graph<'a> {
    /// Adds an alloc node for `len` elements of `T`; the returned buffer may
    /// be used by nodes ordered after it, until a free node.
    ///
    /// # Errors
    /// As [`Graph::add_alloc_with`](crate::Graph::add_alloc_with).
    pub fn add_alloc<T: Pod>(
        &mut self,
        label: &str,
        len: usize,
        deps: &[Node],
    ) -> Result<(Node, Buf<'a, T>)> {
        self.add_alloc_with(label, len, &AllocOptions::default(), deps)
    }

    /// [`Graph::add_alloc`] with options (peer access).
    ///
    /// # Errors
    /// As every node-adding method (see [`Graph`](crate::Graph#errors));
    /// [`GraphError::Unsupported`] in a conditional body (CUDA allows memory
    /// nodes in the top graph only); [`GraphError::InvalidArguments`] for
    /// zero bytes; [`GraphError::TooLarge`] for more than the device's
    /// memory; [`GraphError::Driver`] when the driver refuses the node.
    pub fn add_alloc_with<T: Pod>(
        &mut self,
        label: &str,
        len: usize,
        options: &AllocOptions,
        deps: &[Node],
    ) -> Result<(Node, Buf<'a, T>)> {
        if self.is_body() {
            return Err(GraphError::unsupported(
                "add_alloc",
                Some(label),
                Unsupported::MemoryNodeInBody,
            ));
        }
        let bytes = crate::error::byte_len::<T>(len, Some(label))?;
        if bytes == 0 {
            return Err(GraphError::arguments(
                label,
                crate::error::ArgumentRefusal::EmptyAllocation,
            ));
        }
        // Refuse what can never fit here, where the error can name the node
        // (the physical memory is taken at launch, where it could not).
        let total = self.ctx.total_mem().op_at("cuDeviceTotalMem", label)?;
        if bytes > total {
            return Err(GraphError::too_large::<T>(Some(label), len, Some(total)));
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
        let node = self.add_raw(
            label.into(),
            NodeKind::MemAlloc,
            deps,
            None,
            &[],
            result::NodeParams::Generic(&mut params),
        )?;
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
        registry.add_alloc_made_by_last(node.index, alloc);
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

    /// Binds an allocation another graph's launch made: nodes of this graph
    /// may use it (it is live from the graph's start), and one free node may
    /// free it ([`Graph::add_free`]). The graph owns it from now on: it is
    /// freed by that free node when an exec of this graph launches, or when
    /// the graph and its execs are gone. A launch of this graph after the
    /// allocation was freed is refused until the exec that makes it
    /// launches again (which makes it at the same address).
    #[must_use = "the graph uses the allocation only through the returned `Buf`"]
    pub fn bind_escaped<T>(&mut self, escaped: Escaped<T>) -> Buf<'a, T> {
        let (len, held) = escaped.into_bound();
        if held.state.lock().stuck {
            // A copy of the caller's may still use it: never freed (by a
            // free node either), and refused by every node.
            let ptr = held.state.ptr;
            std::mem::forget(held);
            return Buf::new(ptr, len, true, FOREIGN_ROOT, None);
        }
        if held.stream.context().cu_ctx() != self.ctx.cu_ctx() {
            let ptr = held.state.ptr;
            // Dropping it frees it; a buffer of another context is refused
            // by every node.
            drop(held);
            return Buf::new(ptr, len, true, FOREIGN_ROOT, None);
        }
        let buf = self.register_escaped(&held.state, len);
        lock(&self.resources).escapes.push(held);
        buf
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
    ///
    /// # Errors
    /// As every node-adding method (see [`Graph`](crate::Graph#errors));
    /// [`GraphError::Unsupported`] for a buffer that is not a graph
    /// allocation, or part of one; [`GraphError::Unordered`] for one freed
    /// already, or used by a node the free is not ordered after.
    pub fn add_free<T>(&mut self, label: &str, buffer: Buf<'a, T>, deps: &[Node]) -> Result<Node> {
        if self.is_body() {
            return Err(GraphError::unsupported(
                "add_free",
                Some(label),
                Unsupported::MemoryNodeInBody,
            ));
        }
        crate::buffer::refuse_out_of_range(label, &[buffer.as_use(true)])?;
        let alloc = match buffer.as_use(true) {
            BufferUse {
                alloc: Some(alloc),
                root,
                ..
            } if root == self.resource_id && alloc.graph == self.instance => alloc.index,
            BufferUse { alloc: None, .. } => {
                return Err(GraphError::unsupported(
                    "add_free",
                    Some(label),
                    Unsupported::FreeOfBoundBuffer,
                ))
            }
            _ => {
                return Err(GraphError::foreign(
                    crate::error::Foreign::Buffer,
                    Some(label),
                    "add_free",
                ))
            }
        };
        {
            let registry = self.registry();
            let info = registry.allocs.get(alloc as usize).ok_or_else(|| {
                GraphError::foreign(crate::error::Foreign::Allocation, Some(label), "add_free")
            })?;
            let alloc_label = registry.alloc_label(info);
            if buffer.device_ptr() != info.ptr {
                return Err(GraphError::unsupported(
                    "add_free",
                    Some(label),
                    Unsupported::PartialFree {
                        allocation: alloc_label.to_string(),
                    },
                ));
            }
            if let Some(first) = info.freed_by {
                return Err(GraphError::unordered(
                    label,
                    OrderRule::DoubleFree {
                        allocation: alloc_label.to_string(),
                        first: registry.label(first as usize).to_string(),
                    },
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
                    return Err(GraphError::unordered(
                        label,
                        OrderRule::FreeWhileUsed {
                            allocation: alloc_label.to_string(),
                            user: registry.label(user as usize).to_string(),
                        },
                    ));
                }
            }
        }
        let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEM_FREE);
        params.__bindgen_anon_1.free = sys::CUDA_MEM_FREE_NODE_PARAMS {
            dptr: buffer.device_ptr(),
        };
        let node = self.add_raw(
            label.into(),
            NodeKind::MemFree,
            deps,
            None,
            &[],
            result::NodeParams::Generic(&mut params),
        )?;
        self.registry.allocs[alloc as usize].freed_by = Some(node.index);
        Ok(node)
    }
}

/// Graph memory in use and reserved on a device (`cuDeviceGetGraphMemAttribute`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct GraphMemUsage {
    pub used_current: u64,
    pub used_high: u64,
    pub reserved_current: u64,
    pub reserved_high: u64,
}

/// Reads the graph-memory attributes of `ctx`'s device.
///
/// # Errors
/// [`GraphError::Driver`] when the driver cannot read the
/// attributes.
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
///
/// # Errors
/// [`GraphError::Driver`] when the driver refuses.
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
///
/// # Errors
/// [`GraphError::Driver`] when the driver refuses.
pub fn trim_graph_memory(ctx: &Arc<CudaContext>) -> Result<()> {
    ctx.bind_to_thread().op("cuCtxSetCurrent")?;
    // SAFETY: a valid device.
    unsafe { result::graph_mem_trim(ctx.cu_device()) }.op("cuDeviceGraphMemTrim")
}
