//! Stream capture into a child graph node, so work issued on a stream
//! (library calls such as cuBLAS) joins a graph. The work reaches the
//! graph's buffers through views ([`Capture`]) that leave cudarc's event
//! tracking to the exec's launches. If the driver invalidates the capture,
//! it is ended and discarded and the error names the operation.

mod view;
pub use view::{Capture, CaptureView, CaptureViewMut};

use crate::error::{GraphError, Result, Unsupported};
use crate::graph::{create_graph, Graph, RawGraph};
use crate::handle::CondHandle;
use crate::node::Node;
use crate::result;
use cudarc::driver::{sys, CudaStream, DriverError};
use std::sync::Arc;

impl<'a> Graph<'a> {
    /// Captures the work `work` issues on `stream` (`cuStreamBeginCaptureToGraph`)
    /// and adds it as a child graph node.
    ///
    /// The work gets a [`Capture`]: its [`stream`](Capture::stream), and
    /// views of this graph's buffers ([`Capture::read`],
    /// [`Capture::write`]) that cudarc's calls accept (`CudaBlas::gemm`,
    /// say). Through them the node uses the buffers like a kernel node: the
    /// uses are checked when it is added (the buffers are this graph's and
    /// live, a graph allocation is used in its lifetime), and each launch
    /// orders them with cudarc's work elsewhere, with cudarc's event
    /// tracking on. Not checked: whether the work races with nodes beside
    /// it (the `unsafe` of `cuda_graph!`'s capture node promises it does
    /// not; order them with edges). A cudarc
    /// `CudaSlice` used directly in the work instead makes cudarc wait on
    /// events recorded outside the capture when tracking is on (the
    /// default once a context has several streams), which invalidates the
    /// capture; the error says so.
    ///
    /// While the capture is in progress, a context-wide synchronize on any
    /// thread fails (`CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`), and cudarc's
    /// `CudaContext::new_stream` makes one when the context goes from no
    /// stream to one: keep a stream alive in programs that capture while
    /// other threads create their first streams.
    ///
    /// What the work captures must be something a child graph node may
    /// hold: no graph memory nodes (captured `cudaMallocAsync` and
    /// `cudaFreeAsync` become those), and inside a conditional body only
    /// kernel, copy (of device memory), fill, empty, child graph and
    /// conditional nodes. Anything else is refused here, naming the node.
    ///
    /// Captured work reaches device buffers only: a graph's host buffers
    /// (`add_host_buffer`, `host name: T[n];`) have no view here; copy
    /// between them and a device buffer with copy nodes ordered before or
    /// after the capture node.
    ///
    /// Work may fork across streams: [`Capture::fork`] brings another stream
    /// of the context into the capture and [`Capture::join`] joins it back
    /// (two memsets on two streams, say, joined before a kernel); the views
    /// serve there too, and forks left open when the work returns (or
    /// fails, or panics) are joined back then. A view used on a stream outside the capture, or
    /// after the capture ended, panics (checked where cudarc asks a view
    /// for its address; a kernel launched with cudarc's builder is checked
    /// for the capture only).
    ///
    /// # Safety
    /// - Memory the captured work touches other than through the views
    ///   stays valid while this graph or any exec made from it may run
    ///   (the graph cannot see it to borrow it).
    /// - A stream forked into the capture ([`Capture::fork`]) is used by
    ///   nothing but the work until the work returns (a joined fork stays
    ///   in the capture until it ends): work another thread issues on it
    ///   meanwhile is captured into this graph, and runs at every launch
    ///   (after the memory it names may be gone).
    /// - Work through the views is issued on the capture stream (or a
    ///   stream forked from it) while the capture begun here is in progress (a kernel launch builder of
    ///   another stream would run it at once, unordered with the graph's
    ///   launches), and `work` neither ends nor begins a capture on the
    ///   stream.
    /// - Captured work is recorded, not run: host memory a captured copy
    ///   writes is written when the graph runs, not by the time `work`
    ///   returns (never read what cudarc's `clone_dtoh` returns inside
    ///   `work`).
    ///
    /// # Errors
    /// As every node-adding method (see [`Graph`](crate::Graph#errors));
    /// [`GraphError::Capture`] naming the node when the capture
    /// fails (the capture is ended and discarded), the work's own error
    /// (a [`GraphError::CaptureWork`] made by [`failed`] gets the node's
    /// label), and
    /// [`GraphError::Unsupported`] when the captured work
    /// holds what this graph cannot (see above);
    /// [`GraphError::ForeignHandle`] for a stream of another context.
    pub unsafe fn add_capture(
        &mut self,
        label: &str,
        stream: &Arc<CudaStream>,
        deps: &[Node],
        work: impl FnOnce(&Capture<'_, 'a>) -> Result<()>,
    ) -> Result<Node> {
        // SAFETY: forwarded from the caller.
        unsafe { self.add_capture_setting(label, stream, deps, &[], work) }
    }

    /// [`Graph::add_capture`] for work whose kernels set conditional
    /// handles of this graph (`cudaGraphSetConditional` with
    /// [`CondHandle::raw`]): `sets` declares them, so the node is checked
    /// and counted as their setter like a kernel node taking them (the
    /// handles must be this graph's, and another setter of one of them
    /// must be ordered with this node).
    ///
    /// # Safety
    /// As for [`Graph::add_capture`]; and the captured kernels set no
    /// handle but those in `sets` (a kernel that sets another graph's
    /// handle faults).
    ///
    /// # Errors
    /// As [`Graph::add_capture`](crate::Graph::add_capture), and
    /// [`GraphError::ForeignHandle`] for a handle of
    /// another graph.
    pub unsafe fn add_capture_setting(
        &mut self,
        label: &str,
        stream: &Arc<CudaStream>,
        deps: &[Node],
        sets: &[CondHandle],
        work: impl FnOnce(&Capture<'_, 'a>) -> Result<()>,
    ) -> Result<Node> {
        if stream.context().cu_ctx() != self.ctx.cu_ctx() {
            // Its capture would make nodes of another context. (Any value
            // of this one: captured work reaches the graph's buffers only
            // through views nothing tracks.)
            return Err(GraphError::foreign(
                crate::error::Foreign::StreamOfOtherContext,
                Some(label),
                "add_capture",
            ));
        }
        self.check_setters(label, deps, sets)?;
        let tracking = stream.context().is_managing_stream_synchronization();
        let hint_for = |code: sys::CUresult| -> &'static str {
            use sys::CUresult as C;
            let broke_capture = matches!(
                code,
                C::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
                    | C::CUDA_ERROR_STREAM_CAPTURE_ISOLATION
                    | C::CUDA_ERROR_STREAM_CAPTURE_UNJOINED
                    | C::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
                    | C::CUDA_ERROR_CAPTURED_EVENT
            );
            if tracking && broke_capture {
                TRACKING_HINT
            } else {
                ""
            }
        };

        let fail =
            |operation: &'static str, source: cudarc::driver::DriverError| GraphError::Capture {
                label: label.to_string(),
                operation,
                name: format!("{:?}", source.0),
                code: source.0 as u32,
                hint: hint_for(source.0),
                source,
            };
        let captured = RawGraph::new(create_graph(&self.ctx)?, &self.ctx);
        // SAFETY: the stream and graph are live.
        unsafe { result::begin_capture_to_graph(stream.cu_stream(), captured.raw) }
            .map_err(|e| fail("cuStreamBeginCaptureToGraph", e))?;
        // SAFETY: the stream is live and capturing.
        let id = unsafe { result::capture_id(stream.cu_stream()) }
            .map_err(|e| fail("cuStreamGetCaptureInfo", e))?;
        // Always end the capture: when the work returns, fails, or panics
        // (a stream left capturing into a destroyed graph would break every
        // later use of the stream).
        let mut capturing = Capturing {
            stream: stream.cu_stream(),
            id,
            graph: Some(captured),
        };
        let capture = Capture::new(stream, id);
        let worked = work(&capture);
        let uses = capture.into_uses();
        let ended = capturing.end();
        let captured = match (worked, ended) {
            // The call inside the work that broke the capture.
            (
                Err(GraphError::Driver {
                    operation, source, ..
                }),
                _,
            ) => return Err(fail(operation, source)),
            // A library's error: the node's label added.
            (
                Err(GraphError::CaptureWork {
                    operation, source, ..
                }),
                _,
            ) => {
                return Err(GraphError::CaptureWork {
                    label: Some(label.to_string()),
                    operation,
                    source,
                })
            }
            (Err(other), _) => return Err(other),
            (Ok(()), Err(e)) => return Err(fail("cuStreamEndCapture", e)),
            (Ok(()), Ok(graph)) => graph,
        };
        // (After the capture ended: a part past its buffer's end had an
        // empty view, which no length can reach past.)
        crate::buffer::refuse_out_of_range(label, &uses)?;
        let mut host_copy = false;
        if let Some(reason) = refusal(captured.raw, self.is_body(), &mut host_copy)
            .map_err(|e| GraphError::driver("cuGraphGetNodes", e.0, Some(label)))?
        {
            return Err(GraphError::unsupported("add_capture", Some(label), reason));
        }
        // The driver clones the captured graph into the node; ours is dropped.
        let node = self.add_child_node(label, deps, &uses, captured.raw)?;
        for handle in sets {
            self.registry.setters.push(handle.raw(), node.index);
        }
        // As for a copy node of host memory: no device launch, and not in a
        // child graph inside a conditional body.
        if host_copy {
            self.registry.host_copies = true;
        }
        Ok(node)
    }
}

/// Why cudarc's event tracking broke a capture, and what to do.
const TRACKING_HINT: &str =
    "; cudarc's event tracking is active in this context, and a captured cudarc call \
             on a CudaSlice waits on events recorded outside the capture: bind the slice to \
             the graph and hand the call the work's `Capture::read`/`Capture::write` views, \
             which leave tracking to the exec's launches";

/// Why the captured `graph` cannot become a child graph node (of a
/// conditional body, if `in_body`), or None if it can. Child graphs in it
/// are looked into. Sets `host_copy` if it copies host memory.
fn refusal(
    graph: sys::CUgraph,
    in_body: bool,
    host_copy: &mut bool,
) -> std::result::Result<Option<Unsupported>, DriverError> {
    use sys::CUgraphNodeType as T;
    // SAFETY: the graph is live (owned by the caller); so are its nodes and
    // the graphs its child nodes own.
    for node in unsafe { result::graph_nodes(graph) }? {
        // SAFETY: as above.
        let kind = unsafe { result::node_type(node) }?;
        let what = match kind {
            T::CU_GRAPH_NODE_TYPE_MEM_ALLOC | T::CU_GRAPH_NODE_TYPE_MEM_FREE => {
                return Ok(Some(Unsupported::CapturedMemoryNode))
            }
            T::CU_GRAPH_NODE_TYPE_GRAPH => {
                // SAFETY: a live child graph node.
                match refusal(unsafe { result::child_graph(node) }?, in_body, host_copy)? {
                    Some(reason) => return Ok(Some(reason)),
                    None => continue,
                }
            }
            T::CU_GRAPH_NODE_TYPE_KERNEL
            | T::CU_GRAPH_NODE_TYPE_MEMSET
            | T::CU_GRAPH_NODE_TYPE_EMPTY
            | T::CU_GRAPH_NODE_TYPE_CONDITIONAL => continue,
            T::CU_GRAPH_NODE_TYPE_MEMCPY => {
                // SAFETY: a live copy node.
                let (src, dst) = unsafe { result::memcpy_memory_types(node) }?;
                let host = sys::CUmemorytype::CU_MEMORYTYPE_HOST;
                if src != host && dst != host {
                    continue;
                }
                *host_copy = true;
                "a copy of host memory"
            }
            T::CU_GRAPH_NODE_TYPE_HOST => "a host function (cudaLaunchHostFunc)",
            T::CU_GRAPH_NODE_TYPE_WAIT_EVENT | T::CU_GRAPH_NODE_TYPE_EVENT_RECORD => {
                "an event record or wait"
            }
            _ => "a node kind other than kernel, copy, fill, empty, child graph and conditional",
        };
        if in_body {
            return Ok(Some(Unsupported::CapturedInBody { what }));
        }
    }
    Ok(None)
}

/// A stream capturing into the graph it owns; the capture is ended on drop
/// if the work unwound before `end` was called.
///
/// The work holds the stream, and cudarc's safe `end_capture` lets it end
/// our capture itself (and destroy our graph with the `CudaGraph` it
/// returns), then begin another. So the capture is ended only if it is
/// still the one begun here (same capture id), and the graph is destroyed
/// or used only then; otherwise it is left alone (leaked, never destroyed
/// twice).
struct Capturing {
    stream: sys::CUstream,
    id: u64,
    graph: Option<RawGraph>,
}

impl Capturing {
    /// Ends the capture begun here; the captured graph, or why not.
    fn end(&mut self) -> std::result::Result<RawGraph, cudarc::driver::DriverError> {
        let graph = self.graph.take();
        // SAFETY: the stream is live (borrowed by add_capture for the whole
        // capture).
        let current = unsafe { result::capture_id(self.stream) };
        let ours = match current {
            Ok(id) => id == self.id,
            // Not capturing: the work ended our capture (and may have
            // destroyed our graph). Leak it, never destroy it twice.
            Err(cudarc::driver::DriverError(
                sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
            )) => {
                std::mem::forget(graph);
                return Err(cudarc::driver::DriverError(
                    sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
                ));
            }
            // The driver will not say (a capture broken by the work reports
            // its error here): end whatever capture is on the stream, and
            // leak our graph rather than risk destroying it twice.
            Err(_) => false,
        };
        if !ours {
            // Not (known to be) our capture: the work ended ours (our graph
            // may be destroyed already: leak it) and perhaps began another,
            // which is ended here so that the stream is usable again; its
            // graph was made by the driver for whoever ends it.
            std::mem::forget(graph);
            // SAFETY: the stream is live; ending a capture it is not in
            // only fails.
            if let Ok(theirs) = unsafe { result::end_capture(self.stream) } {
                if !theirs.is_null() {
                    // SAFETY: ending the capture handed us this graph, which
                    // is not ours (ours was begun with an id no longer there).
                    let _ = unsafe { result::graph_destroy(theirs) };
                }
            }
            return Err(cudarc::driver::DriverError(
                sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
            ));
        }
        // SAFETY: the stream is capturing into our graph (same capture id).
        let ended = unsafe { result::end_capture(self.stream) };
        match (ended, graph) {
            (Ok(_), Some(graph)) => Ok(graph),
            (Err(e), graph) => {
                drop(graph);
                Err(e)
            }
            (Ok(_), None) => Err(cudarc::driver::DriverError(
                sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
            )),
        }
    }
}

impl Drop for Capturing {
    fn drop(&mut self) {
        if self.graph.is_some() {
            // Unwinding out of the work: end the capture if it is still
            // ours, and discard what it made. Its error is not kept for a
            // later call (unlike the runtime's other drops): a capture the
            // work broke fails to end by design, and that is no fault of
            // what runs next.
            let _ = self.end();
        }
    }
}

/// Maps a cudarc driver error from captured work to ours, naming the call
/// (the node's label is added when the capture fails).
pub fn captured(operation: &'static str, error: cudarc::driver::DriverError) -> GraphError {
    GraphError::driver(operation, error.0, None)
}

/// Maps another error from captured work (a library's: cudarc's
/// `CublasError`, say) to [`GraphError::CaptureWork`], naming the call;
/// the node's label is added when the capture fails.
pub fn failed(
    operation: &'static str,
    error: impl std::error::Error + Send + Sync + 'static,
) -> GraphError {
    GraphError::CaptureWork {
        label: None,
        operation,
        source: Box::new(error),
    }
}
