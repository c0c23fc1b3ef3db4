//! Raw driver graphs of the benchmark's chains: the "raw" variant's builds
//! and instantiations, and the per-node update's baseline.

use crate::timing::{time_us, Result};
use graph_runtime::cudarc::driver::{sys, CudaContext, CudaSlice, CudaStream, DevicePtr};
use graph_runtime::kernel::KernelDef;
use std::ffi::c_void;
use std::sync::Arc;

/// A buffer's address, for raw driver calls (no cudarc tracking).
pub(crate) fn device_ptr(slice: &CudaSlice<f32>, stream: &CudaStream) -> u64 {
    let (ptr, guard) = slice.device_ptr(stream);
    drop(guard);
    ptr
}

/// An owned raw graph and exec, destroyed on drop.
#[derive(Debug)]
pub(super) struct RawExec {
    graph: sys::CUgraph,
    pub(super) exec: sys::CUgraphExec,
}

impl Drop for RawExec {
    fn drop(&mut self) {
        // SAFETY: both handles are owned here and no longer used.
        unsafe {
            if !self.exec.is_null() {
                sys::cuGraphExecDestroy(self.exec);
            }
            sys::cuGraphDestroy(self.graph);
        }
    }
}

/// Creates a raw graph of `ptrs.len()` chains of `length` AddOne-shaped
/// nodes running `function`, one chain per pointer, added with `call`.
pub(super) fn raw_build(
    function: sys::CUfunction,
    ptrs: &[u64],
    length: usize,
    call: RawAdd,
) -> Result<RawExec> {
    let mut raw = RawExec {
        graph: std::ptr::null_mut(),
        exec: std::ptr::null_mut(),
    };
    // SAFETY: a graph created here; the chains' pointers stay live (caller).
    unsafe {
        sys::cuGraphCreate(&mut raw.graph, 0).result()?;
        for &ptr in ptrs {
            add_raw_chain(raw.graph, function, ptr, length, call, None)?;
        }
    }
    Ok(raw)
}

/// Instantiates a raw graph (flags 0, as the C++ baseline does).
pub(super) fn raw_instantiate(raw: &mut RawExec) -> Result {
    let mut params = sys::CUDA_GRAPH_INSTANTIATE_PARAMS {
        flags: 0,
        hUploadStream: std::ptr::null_mut(),
        hErrNode_out: std::ptr::null_mut(),
        result_out: sys::CUgraphInstantiateResult::CUDA_GRAPH_INSTANTIATE_SUCCESS,
    };
    // SAFETY: the graph is live.
    unsafe { sys::cuGraphInstantiateWithParams(&mut raw.exec, raw.graph, &mut params) }.result()?;
    Ok(())
}

/// One timed build and one timed instantiation of a raw graph.
pub(super) fn raw_build_once(
    function: sys::CUfunction,
    ptrs: &[u64],
    length: usize,
) -> Result<(f64, f64)> {
    let (build, mut raw) = time_us(|| raw_build(function, ptrs, length, RawAdd::Generic))?;
    let (instantiate, ()) = time_us(|| raw_instantiate(&mut raw))?;
    Ok((build, instantiate))
}

/// The driver call a raw chain adds its kernel nodes with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RawAdd {
    /// `cuGraphAddNode_v2`, the generic call the runtime makes.
    Generic,
    /// `cuGraphAddKernelNode_v2`, the call behind C++'s
    /// `cudaGraphAddKernelNode`.
    KernelNode,
}

/// Adds a chain of `length` AddOne nodes (1 x 32 threads on `ptr`) to
/// `graph` with raw `call`s (no edge data), in the current context (as the
/// runtime adds them), pushing each node to `nodes` if given.
///
/// # Safety
/// `graph` is live and `ptr` a live device allocation of 32 floats.
pub(super) unsafe fn add_raw_chain(
    graph: sys::CUgraph,
    function: sys::CUfunction,
    ptr: u64,
    length: usize,
    call: RawAdd,
    mut nodes: Option<&mut Vec<sys::CUgraphNode>>,
) -> Result {
    let n: u32 = 32;
    let mut prev: Option<sys::CUgraphNode> = None;
    for _ in 0..length {
        let mut args = [
            &ptr as *const u64 as *mut c_void,
            &n as *const u32 as *mut c_void,
        ];
        let mut node = std::ptr::null_mut();
        let deps = prev.as_ref().map_or(std::ptr::null(), |p| p as *const _);
        let count = usize::from(prev.is_some());
        // One 32-thread block of `function` on `args` (the two parameter
        // structs name the same fields).
        macro_rules! one_block {
            ($params:expr) => {{
                $params.func = function;
                ($params.gridDimX, $params.gridDimY, $params.gridDimZ) = (1, 1, 1);
                ($params.blockDimX, $params.blockDimY, $params.blockDimZ) = (32, 1, 1);
                $params.kernelParams = args.as_mut_ptr();
            }};
        }
        let added = match call {
            // SAFETY: zeroed parameters are valid (a null context: the
            // current one), the launch is set by `one_block`; the graph is
            // live (caller) and the parameters point to live locals.
            RawAdd::Generic => unsafe {
                let mut params: sys::CUgraphNodeParams = std::mem::zeroed();
                params.type_ = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL;
                one_block!(params.__bindgen_anon_1.kernel);
                sys::cuGraphAddNode_v2(&mut node, graph, deps, std::ptr::null(), count, &mut params)
            },
            // SAFETY: as above.
            RawAdd::KernelNode => unsafe {
                let mut params: sys::CUDA_KERNEL_NODE_PARAMS = std::mem::zeroed();
                one_block!(params);
                sys::cuGraphAddKernelNode_v2(&mut node, graph, deps, count, &params)
            },
        };
        added.result()?;
        prev = Some(node);
        if let Some(nodes) = nodes.as_deref_mut() {
            nodes.push(node);
        }
    }
    Ok(())
}

/// A raw 1 x `length` chain of AddOne nodes (32 threads on one buffer),
/// instantiated, with its nodes: the baseline of the per-node update
/// (`cuGraphExecKernelNodeSetParams`, all a C++ program calls).
#[derive(Debug)]
pub struct RawChain {
    raw: RawExec,
    nodes: Vec<sys::CUgraphNode>,
    function: sys::CUfunction,
    ptr: u64,
}

impl RawChain {
    /// Builds and instantiates the chain on `buf` (32 floats), which must
    /// outlive it and every launch of it.
    pub fn new(
        ctx: &Arc<CudaContext>,
        stream: &CudaStream,
        buf: &CudaSlice<f32>,
        length: usize,
    ) -> Result<Self> {
        let function = kernels::AddOne::load(ctx)?.function().cu_function();
        ctx.bind_to_thread()?;
        let ptr = device_ptr(buf, stream);
        let mut nodes = Vec::with_capacity(length);
        let mut raw = RawExec {
            graph: std::ptr::null_mut(),
            exec: std::ptr::null_mut(),
        };
        // SAFETY: a graph created here, on a live buffer of 32 floats.
        unsafe {
            sys::cuGraphCreate(&mut raw.graph, 0).result()?;
            add_raw_chain(
                raw.graph,
                function,
                ptr,
                length,
                RawAdd::KernelNode,
                Some(&mut nodes),
            )?;
        }
        raw_instantiate(&mut raw)?;
        Ok(RawChain {
            raw,
            nodes,
            function,
            ptr,
        })
    }

    /// Launches the chain on `stream`.
    pub fn launch(&self, stream: &CudaStream) -> Result {
        // SAFETY: the exec is live; its buffer outlives it (`new`).
        unsafe { sys::cuGraphLaunch(self.raw.exec, stream.cu_stream()) }.result()?;
        Ok(())
    }

    /// Sets node `index`'s arguments to `(buffer, n)` in the exec.
    pub fn set_count(&self, index: usize, n: u32) -> Result {
        let mut args = [
            &self.ptr as *const u64 as *mut c_void,
            &n as *const u32 as *mut c_void,
        ];
        // SAFETY: zeroed parameters are valid; the launch and arguments
        // are set below and point to live locals; the node is the exec's.
        unsafe {
            let mut params: sys::CUDA_KERNEL_NODE_PARAMS = std::mem::zeroed();
            params.func = self.function;
            (params.gridDimX, params.gridDimY, params.gridDimZ) = (1, 1, 1);
            (params.blockDimX, params.blockDimY, params.blockDimZ) = (32, 1, 1);
            params.kernelParams = args.as_mut_ptr();
            sys::cuGraphExecKernelNodeSetParams_v2(self.raw.exec, self.nodes[index], &params)
        }
        .result()?;
        Ok(())
    }
}
