//! The WHILE loop built with raw driver calls around nvcc's `countdown`
//! kernel (loaded as a module function, as our runtime loads kernels).
//! Against the macro's WHILE and C++'s, it separates our graph and launch
//! from the driver's placement of identical execs (BENCHMARKS.md, "Loops").

use crate::timing::Result;
use graph_runtime::cudarc::driver::{sys, CudaContext, CudaStream};
use std::ffi::c_void;
use std::sync::Arc;

/// A raw WHILE graph over one counter, its exec, and the loaded code; all
/// destroyed on drop.
#[derive(Debug)]
pub struct RawWhile {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    module: sys::CUmodule,
}

impl RawWhile {
    /// Builds and instantiates `while (handle) countdown<<<1, 32>>>(handle,
    /// counter)` with the handle defaulting to 1 at every launch.
    pub fn new(ctx: &Arc<CudaContext>, cubin: &[u8], counter: u64) -> Result<Self> {
        ctx.bind_to_thread()?;
        let mut raw = RawWhile {
            graph: std::ptr::null_mut(),
            exec: std::ptr::null_mut(),
            module: std::ptr::null_mut(),
        };
        // SAFETY: every handle is created here and owned by `raw`; the
        // cubin outlives the load calls; kernel params point to live locals
        // during the call that copies them.
        unsafe {
            sys::cuModuleLoadData(&mut raw.module, cubin.as_ptr().cast()).result()?;
            let mut func = std::ptr::null_mut();
            sys::cuModuleGetFunction(&mut func, raw.module, c"countdown".as_ptr()).result()?;
            sys::cuGraphCreate(&mut raw.graph, 0).result()?;
            let mut handle: sys::CUgraphConditionalHandle = 0;
            sys::cuGraphConditionalHandleCreate(
                &mut handle,
                raw.graph,
                ctx.cu_ctx(),
                1,
                sys::CU_GRAPH_COND_ASSIGN_DEFAULT,
            )
            .result()?;
            let mut params: sys::CUgraphNodeParams = std::mem::zeroed();
            params.type_ = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_CONDITIONAL;
            params.__bindgen_anon_1.conditional = sys::CUDA_CONDITIONAL_NODE_PARAMS {
                handle,
                type_: sys::CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_WHILE,
                size: 1,
                phGraph_out: std::ptr::null_mut(),
                ctx: ctx.cu_ctx(),
            };
            let mut node = std::ptr::null_mut();
            sys::cuGraphAddNode(&mut node, raw.graph, std::ptr::null(), 0, &mut params).result()?;
            let body = *params.__bindgen_anon_1.conditional.phGraph_out;
            let mut args = [
                &handle as *const u64 as *mut c_void,
                &counter as *const u64 as *mut c_void,
            ];
            let mut kernel: sys::CUgraphNodeParams = std::mem::zeroed();
            kernel.type_ = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL;
            let k = &mut kernel.__bindgen_anon_1.kernel;
            // With `func` null the driver launches `kern` in the current
            // context (`ctx` null).
            k.func = func;
            (k.gridDimX, k.gridDimY, k.gridDimZ) = (1, 1, 1);
            (k.blockDimX, k.blockDimY, k.blockDimZ) = (32, 1, 1);
            k.kernelParams = args.as_mut_ptr();
            sys::cuGraphAddNode(&mut node, body, std::ptr::null(), 0, &mut kernel).result()?;
            sys::cuGraphInstantiateWithFlags(&mut raw.exec, raw.graph, 0).result()?;
        }
        Ok(raw)
    }

    /// The graph in the driver's verbose DOT (to compare with ours).
    pub fn dot(&self) -> Result<String> {
        let path = std::env::temp_dir().join(format!("raw-while-{}.dot", std::process::id()));
        let c_path = std::ffi::CString::new(path.to_string_lossy().into_owned())?;
        let flags = sys::CUgraphDebugDot_flags::CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE as u32;
        // SAFETY: the graph is live; the path is NUL-terminated.
        unsafe { sys::cuGraphDebugDotPrint(self.graph, c_path.as_ptr(), flags).result() }?;
        let text = std::fs::read_to_string(&path)?;
        let _ = std::fs::remove_file(&path);
        Ok(text)
    }

    /// Launches the exec on `stream`.
    pub fn launch(&self, stream: &CudaStream) -> Result {
        // SAFETY: the exec is owned here and live, and so is its counter
        // (the caller's).
        unsafe { sys::cuGraphLaunch(self.exec, stream.cu_stream()) }.result()?;
        Ok(())
    }
}

impl Drop for RawWhile {
    fn drop(&mut self) {
        // SAFETY: every non-null handle is owned here and no longer used.
        unsafe {
            if !self.exec.is_null() {
                sys::cuGraphExecDestroy(self.exec);
            }
            if !self.graph.is_null() {
                sys::cuGraphDestroy(self.graph);
            }
            if !self.module.is_null() {
                sys::cuModuleUnload(self.module);
            }
        }
    }
}
