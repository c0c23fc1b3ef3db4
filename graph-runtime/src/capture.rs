//! Stream capture into a child graph node, so work issued on a stream
//! (library calls such as cuBLAS) joins a graph. If the driver invalidates
//! the capture, it is ended and discarded and the error names the operation.

use crate::error::{GraphError, Result};
use crate::graph::{create_graph, zeroed_params, Graph, RawGraph};
use crate::node::{Node, NodeKind};
use crate::result;
use cudarc::driver::{sys, CudaStream};
use std::sync::Arc;

impl<'a> Graph<'a> {
    /// Captures the work `work` issues on `stream` (`cuStreamBeginCaptureToGraph`)
    /// and adds it as a child graph node.
    ///
    /// cudarc's event tracking (active once a context has several streams)
    /// makes captured cudarc calls wait on events recorded outside the
    /// capture, which invalidates it: call `ctx.disable_event_tracking()`
    /// before allocating the slices such work uses. The error says so.
    ///
    /// # Safety
    /// The memory the captured work touches must stay valid while this graph
    /// or any exec made from it may run (the graph cannot see it to borrow it).
    pub unsafe fn add_capture(
        &mut self,
        label: &str,
        stream: &Arc<CudaStream>,
        deps: &[Node],
        work: impl FnOnce(&Arc<CudaStream>) -> Result<()>,
    ) -> Result<Node> {
        let hint = if stream.context().is_managing_stream_synchronization() {
            "; cudarc's event tracking is active in this context and breaks capture: \
             call ctx.disable_event_tracking() before allocating the slices the captured work uses"
        } else {
            ""
        };
        let fail = |operation: &'static str, name: String, code: u32| GraphError::Capture {
            label: label.to_string(),
            operation,
            name,
            code,
            hint,
        };
        let captured = RawGraph::new(create_graph(&self.ctx)?, &self.ctx);
        // SAFETY: the stream and graph are live.
        unsafe { result::begin_capture_to_graph(stream.cu_stream(), captured.raw) }.map_err(
            |e| {
                fail(
                    "cuStreamBeginCaptureToGraph",
                    format!("{:?}", e.0),
                    e.0 as u32,
                )
            },
        )?;
        // Always end the capture: when the work returns, fails, or panics
        // (a stream left capturing into a destroyed graph would break every
        // later use of the stream).
        let mut capturing = Capturing {
            stream: stream.cu_stream(),
            ended: false,
        };
        let worked = work(stream);
        let ended = capturing.end();
        match (worked, ended) {
            // The call inside the work that broke the capture.
            (
                Err(GraphError::Driver {
                    operation,
                    name,
                    code,
                    ..
                }),
                _,
            ) => return Err(fail(operation, name, code)),
            (Err(other), _) => return Err(other),
            (Ok(()), Err(e)) => {
                return Err(fail("cuStreamEndCapture", format!("{:?}", e.0), e.0 as u32))
            }
            (Ok(()), Ok(_)) => {}
        }
        let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_GRAPH);
        params.__bindgen_anon_1.graph = sys::CUDA_CHILD_GRAPH_NODE_PARAMS {
            graph: captured.raw,
        };
        // The driver clones the captured graph into the node; ours is dropped.
        self.add_raw(label, NodeKind::ChildGraph, deps, None, &[], &mut params)
    }
}

/// A stream capturing into a graph; the capture is ended on drop if the
/// work unwound before `end` was called.
struct Capturing {
    stream: sys::CUstream,
    ended: bool,
}

impl Capturing {
    fn end(&mut self) -> std::result::Result<sys::CUgraph, cudarc::driver::DriverError> {
        self.ended = true;
        // SAFETY: the stream is capturing (begun by add_capture) and live
        // (borrowed by add_capture for the whole capture).
        unsafe { result::end_capture(self.stream) }
    }
}

impl Drop for Capturing {
    fn drop(&mut self) {
        if !self.ended {
            // Unwinding out of the work: end the capture, discard what it
            // made (the graph it captured into is owned and destroyed by
            // add_capture's `captured`).
            let _ = self.end();
        }
    }
}

/// Maps a cudarc error from captured work to ours, naming the call.
pub fn captured(operation: &'static str, error: cudarc::driver::DriverError) -> GraphError {
    GraphError::driver(operation, error.0, None)
}
