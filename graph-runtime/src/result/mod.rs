//! The thin layer: one `unsafe fn` per driver call the runtime makes,
//! returning `Result` instead of a status code (cudarc's `result` style).
//! Nothing here owns anything; the safe types in the other modules do.
//!
//! # Safety
//!
//! Every function forwards raw handles to the driver: the caller guarantees
//! they are live handles of the current context, and that pointers point to
//! initialised values for the duration of the call.
//!
//! # Errors
//!
//! Every function returns the driver's status as cudarc's `DriverError`
//! when it is not `CUDA_SUCCESS`, and nothing else (so no function repeats
//! it).
#![allow(clippy::missing_errors_doc)]

use cudarc::driver::sys::{self, CUgraph, CUgraphExec, CUgraphNode, CUstream};
use cudarc::driver::DriverError;
use std::ffi::{c_void, CStr};
use std::mem::MaybeUninit;

mod stream;

pub use stream::*;

type R<T> = Result<T, DriverError>;

/// The driver's CUDA version, encoded as 1000 * major + 10 * minor (no
/// context needed, nor `cuInit`).
pub fn driver_version() -> R<i32> {
    let mut version = 0;
    // SAFETY: the out-pointer is valid for the call.
    unsafe { sys::cuDriverGetVersion(&mut version) }.result()?;
    Ok(version)
}

/// # Safety
/// `node` is a live host node; `params` point to a function and data that
/// stay valid while any graph or exec may call them.
pub unsafe fn host_node_set_params(
    node: CUgraphNode,
    params: &sys::CUDA_HOST_NODE_PARAMS,
) -> R<()> {
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuGraphHostNodeSetParams(node, params) }.result()
}

/// # Safety
/// `node` is a live copy node of a graph (not an exec).
pub unsafe fn memcpy_node_params(node: CUgraphNode) -> R<sys::CUDA_MEMCPY3D> {
    let mut params = MaybeUninit::uninit();
    // SAFETY: forwarded from the caller; the out-pointer is valid.
    unsafe { sys::cuGraphMemcpyNodeGetParams(node, params.as_mut_ptr()) }.result()?;
    // SAFETY: initialised by the successful call.
    Ok(unsafe { params.assume_init() })
}

/// # Safety
/// `node` is a live copy node of a graph; `params` name memory valid for
/// every launch of it (kept alive by the graph).
pub unsafe fn set_memcpy_node_params(node: CUgraphNode, params: &sys::CUDA_MEMCPY3D) -> R<()> {
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuGraphMemcpyNodeSetParams(node, params) }.result()
}

/// # Safety
/// A context must be current on this thread.
pub unsafe fn graph_create() -> R<CUgraph> {
    let mut graph = MaybeUninit::uninit();
    // SAFETY: the out-pointer is valid; flags must be 0.
    unsafe { sys::cuGraphCreate(graph.as_mut_ptr(), 0) }.result()?;
    // SAFETY: initialised by the successful call.
    Ok(unsafe { graph.assume_init() })
}

/// # Safety
/// `graph` is a live graph that is not used afterwards.
pub unsafe fn graph_destroy(graph: CUgraph) -> R<()> {
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuGraphDestroy(graph) }.result()
}

/// A node's parameters as [`add_node`] takes them.
pub enum NodeParams<'p> {
    /// Any node type's, for the polymorphic `cuGraphAddNode_v2`.
    Generic(&'p mut sys::CUgraphNodeParams),
    /// A kernel node's, for `cuGraphAddKernelNode_v2`: built as that call
    /// takes them, not converted from the generic struct (a copy a node).
    Kernel(&'p sys::CUDA_KERNEL_NODE_PARAMS_v2),
}

impl std::fmt::Debug for NodeParams<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // (The generic struct is a union: its node type says which member.)
        match self {
            NodeParams::Generic(params) => write!(f, "Generic({:?})", params.type_),
            NodeParams::Kernel(params) => write!(f, "Kernel({params:?})"),
        }
    }
}

/// Adds a node through the polymorphic `cuGraphAddNode_v2` (CUDA 12.3+,
/// with edge data when given); a kernel node with default edges through
/// `cuGraphAddKernelNode_v2`, the cheaper call.
///
/// # Safety
/// `graph` and `deps` are live; `params` is fully initialised for its type;
/// `edges`, if given, has one entry per dependency.
pub unsafe fn add_node(
    graph: CUgraph,
    deps: &[CUgraphNode],
    edges: Option<&[sys::CUgraphEdgeData]>,
    params: NodeParams<'_>,
) -> R<CUgraphNode> {
    let mut node = MaybeUninit::uninit();
    let deps_ptr = if deps.is_empty() {
        std::ptr::null()
    } else {
        deps.as_ptr()
    };
    // `cuGraphAddNode_v2` (CUDA 12.3+) is in every binding cudarc has from
    // 12.8 up (13.0 dropped the first version); no edge data means default
    // edges.
    let mut generic;
    let params = match (params, edges) {
        // A kernel node with default edges goes through the kernel-node
        // call, as C++'s `cudaGraphAddKernelNode` does: 0.011-0.027 us a
        // node less than the generic call on the H200 (BENCHMARKS.md, runs
        // 34-35, build breakdown).
        (NodeParams::Kernel(kernel), None) => {
            // SAFETY: pointers are valid for `deps.len()` entries (caller);
            // the kernel's parameters are as the caller initialised them.
            unsafe {
                sys::cuGraphAddKernelNode_v2(node.as_mut_ptr(), graph, deps_ptr, deps.len(), kernel)
            }
            .result()?;
            // SAFETY: initialised by the successful call.
            return Ok(unsafe { node.assume_init() });
        }
        (NodeParams::Kernel(kernel), Some(_)) => {
            generic = kernel_node_params(kernel);
            &mut generic
        }
        (NodeParams::Generic(params), _) => params,
    };
    let edges_ptr = edges.map_or(std::ptr::null(), <[_]>::as_ptr);
    // SAFETY: pointers are valid for `deps.len()` entries (caller).
    unsafe {
        sys::cuGraphAddNode_v2(
            node.as_mut_ptr(),
            graph,
            deps_ptr,
            edges_ptr,
            deps.len(),
            params,
        )
    }
    .result()?;
    // SAFETY: initialised by the successful call.
    Ok(unsafe { node.assume_init() })
}

/// A kernel node's parameters in the generic struct (its kernel member,
/// `_v3`, has the same fields as `CUDA_KERNEL_NODE_PARAMS_v2`).
fn kernel_node_params(kernel: &sys::CUDA_KERNEL_NODE_PARAMS_v2) -> sys::CUgraphNodeParams {
    // SAFETY: CUgraphNodeParams is plain data for which all-zero is valid.
    let mut params: sys::CUgraphNodeParams = unsafe { std::mem::zeroed() };
    params.type_ = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL;
    params.__bindgen_anon_1.kernel = sys::CUDA_KERNEL_NODE_PARAMS_v3 {
        func: kernel.func,
        gridDimX: kernel.gridDimX,
        gridDimY: kernel.gridDimY,
        gridDimZ: kernel.gridDimZ,
        blockDimX: kernel.blockDimX,
        blockDimY: kernel.blockDimY,
        blockDimZ: kernel.blockDimZ,
        sharedMemBytes: kernel.sharedMemBytes,
        kernelParams: kernel.kernelParams,
        extra: kernel.extra,
        kern: kernel.kern,
        ctx: kernel.ctx,
    };
    params
}

/// # Safety
/// `graph` is live; `params.hUploadStream` is null or a live stream.
pub unsafe fn instantiate(
    graph: CUgraph,
    params: &mut sys::CUDA_GRAPH_INSTANTIATE_PARAMS,
) -> R<CUgraphExec> {
    let mut exec = MaybeUninit::uninit();
    // SAFETY: forwarded from the caller; the out-pointer is valid.
    unsafe { sys::cuGraphInstantiateWithParams(exec.as_mut_ptr(), graph, params) }.result()?;
    // SAFETY: initialised by the successful call.
    Ok(unsafe { exec.assume_init() })
}

/// Adds the edge `from -> to` (a default edge) to `graph`.
///
/// # Safety
/// `graph` is live and holds both nodes; no other thread uses it.
pub unsafe fn add_dependency(graph: CUgraph, from: CUgraphNode, to: CUgraphNode) -> R<()> {
    // `_v2` as for `add_node`; no edge data means a default edge.
    // SAFETY: one entry each, valid for the call (caller: live nodes).
    unsafe { sys::cuGraphAddDependencies_v2(graph, &from, &to, std::ptr::null(), 1) }.result()
}

/// Removes `node` and its edges from its graph.
///
/// # Safety
/// `node` is live and not used afterwards; no other thread uses its graph.
pub unsafe fn destroy_node(node: CUgraphNode) -> R<()> {
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuGraphDestroyNode(node) }.result()
}

/// # Safety
/// `exec` is live and not used afterwards.
pub unsafe fn exec_destroy(exec: CUgraphExec) -> R<()> {
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuGraphExecDestroy(exec) }.result()
}

/// # Safety
/// `exec` and `stream` are live; everything the exec references is alive
/// until the launch completes.
pub unsafe fn launch(exec: CUgraphExec, stream: CUstream) -> R<()> {
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuGraphLaunch(exec, stream) }.result()
}

/// # Safety
/// `exec` and `stream` are live.
pub unsafe fn upload(exec: CUgraphExec, stream: CUstream) -> R<()> {
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuGraphUpload(exec, stream) }.result()
}

/// # Safety
/// `exec` and `graph` are live.
pub unsafe fn exec_update(
    exec: CUgraphExec,
    graph: CUgraph,
    info: &mut sys::CUgraphExecUpdateResultInfo,
) -> R<()> {
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuGraphExecUpdate_v2(exec, graph, info) }.result()
}

/// # Safety
/// `graph` is live.
pub unsafe fn graph_clone(graph: CUgraph) -> R<CUgraph> {
    let mut clone = MaybeUninit::uninit();
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuGraphClone(clone.as_mut_ptr(), graph) }.result()?;
    // SAFETY: initialised by the successful call.
    Ok(unsafe { clone.assume_init() })
}

/// # Safety
/// `node` is a node of the graph `clone` was cloned from.
pub unsafe fn find_in_clone(node: CUgraphNode, clone: CUgraph) -> R<CUgraphNode> {
    let mut found = MaybeUninit::uninit();
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuGraphNodeFindInClone(found.as_mut_ptr(), node, clone) }.result()?;
    // SAFETY: initialised by the successful call.
    Ok(unsafe { found.assume_init() })
}

/// # Safety
/// `graph` and `ctx` are live.
pub unsafe fn conditional_handle_create(
    graph: CUgraph,
    ctx: sys::CUcontext,
    default: u32,
    flags: u32,
) -> R<sys::CUgraphConditionalHandle> {
    let mut handle = MaybeUninit::uninit();
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuGraphConditionalHandleCreate(handle.as_mut_ptr(), graph, ctx, default, flags) }
        .result()?;
    // SAFETY: initialised by the successful call.
    Ok(unsafe { handle.assume_init() })
}

/// # Safety
/// `destroy(ptr)` must be safe to call once, from any thread.
pub unsafe fn user_object_create(
    ptr: *mut c_void,
    destroy: unsafe extern "C" fn(*mut c_void),
) -> R<sys::CUuserObject> {
    let mut object = MaybeUninit::uninit();
    let flags = sys::CUuserObject_flags::CU_USER_OBJECT_NO_DESTRUCTOR_SYNC as u32;
    // SAFETY: forwarded from the caller; one initial reference.
    unsafe { sys::cuUserObjectCreate(object.as_mut_ptr(), ptr, Some(destroy), 1, flags) }
        .result()?;
    // SAFETY: initialised by the successful call.
    Ok(unsafe { object.assume_init() })
}

/// Moves one reference of `object` into `graph`.
///
/// # Safety
/// `graph` is live; the caller owns the reference it moves.
pub unsafe fn graph_take_user_object(graph: CUgraph, object: sys::CUuserObject) -> R<()> {
    let flags = sys::CUuserObjectRetain_flags::CU_GRAPH_USER_OBJECT_MOVE as u32;
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuGraphRetainUserObject(graph, object, 1, flags) }.result()
}

/// Gives `graph` its own reference of `object`.
///
/// # Safety
/// `graph` and `object` are live.
pub unsafe fn graph_retain_user_object(graph: CUgraph, object: sys::CUuserObject) -> R<()> {
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuGraphRetainUserObject(graph, object, 1, 0) }.result()
}

/// # Safety
/// The caller owns the reference it releases.
pub unsafe fn user_object_release(object: sys::CUuserObject) -> R<()> {
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuUserObjectRelease(object, 1) }.result()
}

/// # Safety
/// `graph` is live.
pub unsafe fn debug_dot_print(graph: CUgraph, path: &CStr, flags: u32) -> R<()> {
    // SAFETY: forwarded from the caller; `path` is NUL-terminated.
    unsafe { sys::cuGraphDebugDotPrint(graph, path.as_ptr(), flags) }.result()
}

/// # Safety
/// `stream` and `graph` are live.
pub unsafe fn begin_capture_to_graph(stream: CUstream, graph: CUgraph) -> R<()> {
    // Relaxed: a capture in thread-local mode was seen to make other
    // threads' cuStreamCreate fail (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED).
    let mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
    // SAFETY: forwarded from the caller; no dependencies.
    unsafe {
        sys::cuStreamBeginCaptureToGraph(stream, graph, std::ptr::null(), std::ptr::null(), 0, mode)
    }
    .result()
}

/// # Safety
/// `stream` is live and capturing.
pub unsafe fn end_capture(stream: CUstream) -> R<CUgraph> {
    let mut graph = MaybeUninit::uninit();
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuStreamEndCapture(stream, graph.as_mut_ptr()) }.result()?;
    // SAFETY: initialised by the successful call.
    Ok(unsafe { graph.assume_init() })
}

/// Sets a kernel node's parameters in an exec through the kernel-specific
/// call (cheaper than the polymorphic one).
///
/// # Safety
/// `exec` is live and `node` a node of the graph it was instantiated from;
/// `params` is a kernel node's, fully initialised, pointing to live storage.
pub unsafe fn exec_kernel_node_set_params(
    exec: CUgraphExec,
    node: CUgraphNode,
    params: &sys::CUDA_KERNEL_NODE_PARAMS_v2,
) -> R<()> {
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuGraphExecKernelNodeSetParams_v2(exec, node, params) }.result()
}

/// # Safety
/// `exec` is live and `node` a node of the graph it was instantiated from.
pub unsafe fn node_set_enabled(exec: CUgraphExec, node: CUgraphNode, enabled: bool) -> R<()> {
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuGraphNodeSetEnabled(exec, node, u32::from(enabled)) }.result()
}

/// # Safety
/// `device` is a valid device ordinal's handle.
pub unsafe fn graph_mem_attribute(
    device: sys::CUdevice,
    attr: sys::CUgraphMem_attribute,
) -> R<u64> {
    let mut value = 0u64;
    // SAFETY: the attributes read here are all 64-bit values.
    unsafe { sys::cuDeviceGetGraphMemAttribute(device, attr, (&mut value as *mut u64).cast()) }
        .result()?;
    Ok(value)
}

/// # Safety
/// `device` is valid; `attr` is one of the resettable high watermarks.
pub unsafe fn reset_graph_mem_attribute(
    device: sys::CUdevice,
    attr: sys::CUgraphMem_attribute,
) -> R<()> {
    let mut zero = 0u64;
    // SAFETY: the high-watermark attributes take a 64-bit zero.
    unsafe { sys::cuDeviceSetGraphMemAttribute(device, attr, (&mut zero as *mut u64).cast()) }
        .result()
}

/// # Safety
/// `device` is valid.
pub unsafe fn graph_mem_trim(device: sys::CUdevice) -> R<()> {
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuDeviceGraphMemTrim(device) }.result()
}

/// Whether CUDA knows host address `ptr` (page-locked, registered or
/// managed memory). `cuPointerGetAttributes` reports a memory type of 0,
/// without an error, for ordinary pageable memory (the singular
/// `cuPointerGetAttribute` fails there, which sanitizers flag).
///
/// # Safety
/// A context is current.
pub unsafe fn is_cuda_host_memory(ptr: *const c_void) -> R<bool> {
    let mut memory_type: u32 = 0;
    let mut attribute = sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
    let mut data = (&mut memory_type as *mut u32).cast::<c_void>();
    // SAFETY: forwarded from the caller; one attribute, a 32-bit value.
    unsafe { sys::cuPointerGetAttributes(1, &mut attribute, &mut data, ptr as sys::CUdeviceptr) }
        .result()?;
    Ok(memory_type != 0)
}

/// Waits for `stream`'s work, whatever error cudarc holds for the context.
/// cudarc's `CudaStream::synchronize` first binds the context with
/// `bind_to_thread`, which takes any error another call stored in the
/// context (`record_err`, which safe code and every failed cudarc drop
/// reach) and returns it without waiting: a wait that must happen cannot
/// go through it. The stored error stays stored for cudarc to report.
pub fn synchronize(stream: &cudarc::driver::CudaStream) -> R<()> {
    bind(stream.context())?;
    // SAFETY: the stream is live (borrowed), its context current.
    unsafe { cudarc::driver::result::stream::synchronize(stream.cu_stream()) }
}

/// Waits for `event`, whatever error cudarc holds (see [`synchronize`]).
pub fn event_synchronize(event: &cudarc::driver::CudaEvent) -> R<()> {
    bind(event.context())?;
    // SAFETY: the event is live (borrowed), its context current.
    unsafe { cudarc::driver::result::event::synchronize(event.cu_event()) }
}

/// Waits for all the work of `ctx`, whatever error cudarc holds (see
/// [`synchronize`]).
pub fn context_synchronize(ctx: &cudarc::driver::CudaContext) -> R<()> {
    bind(ctx)?;
    cudarc::driver::result::ctx::synchronize()
}

/// Makes `ctx` current on this thread without taking cudarc's stored error.
pub fn bind(ctx: &cudarc::driver::CudaContext) -> R<()> {
    if cudarc::driver::result::ctx::get_current()? == Some(ctx.cu_ctx()) {
        return Ok(());
    }
    // SAFETY: the context is live (borrowed).
    unsafe { cudarc::driver::result::ctx::set_current(ctx.cu_ctx()) }
}

/// Runs a release call from a `Drop`: binds `ctx` without taking cudarc's
/// stored error (`bind_to_thread` would take it, and the release would be
/// skipped), then keeps any failure in the context, as cudarc keeps those
/// of its own drops, for the next checked call to report.
pub fn release_in_drop(ctx: &cudarc::driver::CudaContext, release: impl FnOnce() -> R<()>) {
    ctx.record_err(bind(ctx).and_then(|()| release()));
}

/// # Safety
/// `graph` is live.
pub unsafe fn graph_nodes(graph: CUgraph) -> R<Vec<CUgraphNode>> {
    let mut count = 0usize;
    // SAFETY: a null array asks for the count only.
    unsafe { sys::cuGraphGetNodes(graph, std::ptr::null_mut(), &mut count) }.result()?;
    let mut nodes = vec![std::ptr::null_mut(); count];
    // SAFETY: the array has room for `count` nodes.
    unsafe { sys::cuGraphGetNodes(graph, nodes.as_mut_ptr(), &mut count) }.result()?;
    nodes.truncate(count);
    Ok(nodes)
}

/// # Safety
/// `node` is live.
pub unsafe fn node_type(node: CUgraphNode) -> R<sys::CUgraphNodeType> {
    let mut kind = MaybeUninit::uninit();
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuGraphNodeGetType(node, kind.as_mut_ptr()) }.result()?;
    // SAFETY: initialised by the successful call.
    Ok(unsafe { kind.assume_init() })
}

/// The graph a child graph node holds (owned by the node).
///
/// # Safety
/// `node` is a live child graph node.
pub unsafe fn child_graph(node: CUgraphNode) -> R<CUgraph> {
    let mut graph = MaybeUninit::uninit();
    // SAFETY: forwarded from the caller.
    unsafe { sys::cuGraphChildGraphNodeGetGraph(node, graph.as_mut_ptr()) }.result()?;
    // SAFETY: initialised by the successful call.
    Ok(unsafe { graph.assume_init() })
}

/// The memory types of a copy node's source and destination.
///
/// # Safety
/// `node` is a live copy node.
pub unsafe fn memcpy_memory_types(node: CUgraphNode) -> R<(sys::CUmemorytype, sys::CUmemorytype)> {
    // Not zeroed: the struct's memory-type enums have no zero value (Rust
    // aborts on such a `mem::zeroed`); the driver writes it whole.
    let mut params = MaybeUninit::<sys::CUDA_MEMCPY3D>::uninit();
    // SAFETY: forwarded from the caller; the out-pointer is valid.
    unsafe { sys::cuGraphMemcpyNodeGetParams(node, params.as_mut_ptr()) }.result()?;
    // SAFETY: initialised by the successful call.
    let params = unsafe { params.assume_init() };
    Ok((params.srcMemoryType, params.dstMemoryType))
}

/// The memory location of device `id`. From CUDA 13.2 cudarc's binding puts
/// `id` in a union (first member) instead of a field; the layout is the same
/// in every version: the location type, then the id.
pub fn device_location(id: i32) -> sys::CUmemLocation {
    #[repr(C)]
    struct Location {
        type_: sys::CUmemLocationType,
        id: std::ffi::c_int,
    }
    let location = Location {
        type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        id,
    };
    // SAFETY: both are C structs of a u32 enum then a c_int (or a union
    // whose first member is that c_int), of one size (transmute checks it)
    // and alignment; every bit pattern of the id is valid.
    unsafe { std::mem::transmute::<Location, sys::CUmemLocation>(location) }
}
