//! A profiling launch: where a graph's time goes, per DSL label.
//!
//! Each top-level node gets two event-record nodes: one after the node's
//! dependencies and before the node (when it may start) and one after the
//! node itself (when it is done); a conditional node counts as one node
//! with its bodies, and so does a child graph. The first record has an
//! edge to the node, so that its time is never taken after the node ran
//! (on a GPU shared with other work it was, without one: zero durations);
//! it delays the node by its own latency, the second delays nothing. So
//! in the profiling launch a node after a programmatic or launch-order
//! edge starts only once its dependencies are done: the profile shows
//! none of the overlap those edges allow.
//! The graph is instantiated with them and launched once, and the records
//! are removed again, so the graph does the same work as before; but the
//! driver's order of its nodes may have changed, and `cuGraphExecUpdate`
//! pairs nodes by that order, so an exec made before the profile no longer
//! takes whole-graph updates from the graph, nor one made after it from
//! other builds (`update_or_reinstantiate` makes a new exec). (CUDA
//! removes no node from a graph with memory nodes: those are refused.)
//! The [`Profile`] gives each
//! node's start, end and duration, the critical path, a table and an SVG
//! timeline ([`Profile::svg`]).

mod report;

use crate::error::{DriverResultExt, GraphError, Result, Unsupported};
use crate::exec::InstantiateOptions;
use crate::graph::{zeroed_params, Graph, RawGraph};
use crate::ids::next_id;
use crate::node::NodeKind;
use crate::result;
use cudarc::driver::{sys, CudaEvent, CudaStream};
use std::sync::Arc;

/// One top-level node's times in a profiling launch, in milliseconds
/// after the launch began on its stream.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct NodeTime {
    /// The node's label (the DSL's node name).
    pub label: String,
    pub kind: NodeKind,
    /// When its dependencies were done (the launch's start for a root);
    /// never before a dependency's end.
    pub start_ms: f64,
    /// When it was done.
    pub end_ms: f64,
    /// Its dependencies, as indices into [`Profile::nodes`].
    pub deps: Vec<usize>,
    /// Its row in the timeline: nodes of one lane do not overlap (by more
    /// than a microsecond, an event's resolution).
    pub lane: usize,
}

impl NodeTime {
    /// `end_ms - start_ms`.
    pub fn duration_ms(&self) -> f64 {
        self.end_ms - self.start_ms
    }
}

/// What a profiling launch measured ([`Graph::profile`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    nodes: Vec<NodeTime>,
    device_ms: f64,
    critical: Vec<usize>,
}

impl Profile {
    /// The top-level nodes, in the order they were added.
    pub fn nodes(&self) -> &[NodeTime] {
        &self.nodes
    }

    /// The launch's time on the device: from an event recorded on the
    /// stream before the launch to one recorded after it. Node times count
    /// from the same event, so both include the launch's waits for cudarc
    /// work still pending on the graph's bound buffers (none if their
    /// writes were done).
    pub fn device_ms(&self) -> f64 {
        self.device_ms
    }

    /// The chain of nodes that decided when the launch ended, first to
    /// last, as indices into [`Profile::nodes`]: from the node that ended
    /// last, back through the dependency that ended last each time.
    pub fn critical_path(&self) -> &[usize] {
        &self.critical
    }

    /// The durations along the critical path, summed: close to
    /// [`Profile::device_ms`] less the launch's own overhead.
    pub fn critical_path_ms(&self) -> f64 {
        self.critical
            .iter()
            .map(|&i| self.nodes[i].duration_ms())
            .sum()
    }

    /// How many lanes (timeline rows) the nodes needed.
    pub fn lanes(&self) -> usize {
        self.nodes.iter().map(|n| n.lane + 1).max().unwrap_or(0)
    }

    fn new(mut nodes: Vec<NodeTime>, device_ms: f64) -> Self {
        report::order_times(&mut nodes);
        report::assign_lanes(&mut nodes);
        let critical = report::critical_path(&nodes);
        Profile {
            nodes,
            device_ms,
            critical,
        }
    }
}

impl<'a> Graph<'a> {
    /// Launches the graph once, timed per top-level node (see the
    /// [module docs](crate::profile)), on `stream`, and waits for it. The
    /// graph does the same work as before, but execs made before refuse
    /// whole-graph updates from it, and execs made after it refuse updates
    /// from other builds ([`Exec::update`](crate::Exec::update)). The exec
    /// is uploaded before the timed launch. Launch the graph once before
    /// (an exec of it, or of anything using the same kernels) to keep
    /// one-time costs (module loading) out of the figures.
    ///
    /// # Errors
    /// As [`Graph::instantiate`] (a graph with host buffers that has a live
    /// exec: [`GraphError::SecondExec`]), [`Exec::upload`](crate::Exec::upload)
    /// (a capturing stream), [`Exec::launch`](crate::Exec::launch)
    /// and [`Exec::synchronize`](crate::Exec::synchronize) (whose host-node
    /// panic report is the graph's: it may come from another exec of it);
    /// [`GraphError::Unsupported`] for a conditional body (profile its
    /// graph) and for a graph with memory nodes (CUDA cannot remove the
    /// records from it again); [`GraphError::Driver`] when an event or
    /// record node cannot be made.
    pub fn profile(&mut self, stream: &Arc<CudaStream>) -> Result<Profile> {
        self.profile_with(stream, &InstantiateOptions::new())
    }

    /// [`Graph::profile`], instantiating with `options` (as
    /// [`Graph::instantiate_with`]; not `device_launch`: a graph launched
    /// from the device holds no event records).
    ///
    /// # Errors
    /// As [`Graph::profile`], and [`GraphError::Unsupported`] for
    /// `device_launch`.
    pub fn profile_with(
        &mut self,
        stream: &Arc<CudaStream>,
        options: &InstantiateOptions<'_>,
    ) -> Result<Profile> {
        if self.is_body() {
            return Err(GraphError::unsupported(
                "profile",
                None,
                Unsupported::ConditionalBody,
            ));
        }
        if options.device_launch {
            return Err(GraphError::unsupported(
                "profile",
                None,
                Unsupported::ProfileOfDeviceLaunch,
            ));
        }
        if self
            .registry
            .nodes
            .iter()
            .any(|n| matches!(n.kind, NodeKind::MemAlloc | NodeKind::MemFree))
        {
            return Err(GraphError::unsupported(
                "profile",
                None,
                Unsupported::ProfileWithMemoryNodes,
            ));
        }
        // Adding and removing the records may reorder the graph's sinks
        // and edges for the driver: execs made before refuse updates
        // from it from now on (see `Registry::order`).
        self.registry.order = next_id();
        let registry = self.registry();
        let top: Vec<usize> = (0..registry.nodes.len())
            .filter(|&i| registry.nodes[i].level == self.level)
            .collect();
        let mut position = vec![usize::MAX; registry.nodes.len()];
        for (k, &i) in top.iter().enumerate() {
            position[i] = k;
        }
        let timed = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let event = || self.ctx.new_event(timed).op("cuEventCreate");
        let marks: Vec<(CudaEvent, CudaEvent)> = top
            .iter()
            .map(|_| Ok((event()?, event()?)))
            .collect::<Result<_>>()?;
        let (begin, end) = (event()?, event()?);
        let mut exec = {
            let mut records = Records {
                graph: &self.owner,
                nodes: Vec::with_capacity(2 * top.len()),
            };
            {
                let _entered = self.owner.enter()?;
                self.ctx.bind_to_thread().op("cuCtxSetCurrent")?;
                for (&i, (started, done)) in top.iter().zip(&marks) {
                    let info = &registry.nodes[i];
                    let label = registry.label(i);
                    let deps: Vec<sys::CUgraphNode> = registry
                        .deps(i)
                        .iter()
                        .map(|&d| registry.nodes[d as usize].raw)
                        .collect();
                    let start = records.add(&deps, started, &label)?;
                    records.precede(start, info.raw, &label)?;
                    records.add(&[info.raw], done, &label)?;
                }
            }
            let exec = self.instantiate_with(options);
            records.remove()?;
            exec?
        };
        // The first launch of an exec that was never uploaded uploads it
        // (half a millisecond for a small graph with a WHILE, measured on
        // the H200): do it before the timed region.
        exec.upload(stream)?;
        begin.record(stream).op("cuEventRecord")?;
        let launched = exec
            .launch(stream)
            .and_then(|()| end.record(stream).op("cuEventRecord"));
        // Wait for whatever was queued, whatever failed after it: the record
        // nodes use these events until the launch is done.
        if let Err(e) = exec.synchronize() {
            if e.cuda_result().is_some_and(result::refused_by_capture) {
                // A capture began on the stream since the launch: the wait
                // was refused and the launch may still run, recording into
                // these events. Keep them (the exec's drop keeps the exec).
                std::mem::forget(marks);
                std::mem::forget((begin, end));
            }
            return Err(e);
        }
        launched?;
        end.synchronize().op("cuEventSynchronize")?;
        drop(exec);
        let since = |e: &CudaEvent| -> Result<f64> {
            Ok(f64::from(begin.elapsed_ms(e).op("cuEventElapsedTime")?))
        };
        let mut nodes = Vec::with_capacity(top.len());
        for (&i, (started, done)) in top.iter().zip(&marks) {
            nodes.push(NodeTime {
                label: registry.label(i).to_string(),
                kind: registry.nodes[i].kind,
                start_ms: since(started)?,
                end_ms: since(done)?,
                deps: registry
                    .deps(i)
                    .iter()
                    .map(|&d| position[d as usize])
                    .filter(|&k| k != usize::MAX)
                    .collect(),
                lane: 0,
            });
        }
        Ok(Profile::new(nodes, since(&end)?))
    }
}

/// The record nodes a profiling launch added to a graph, removed by
/// [`Records::remove`] (or on drop, if adding or instantiating failed).
struct Records<'g> {
    graph: &'g RawGraph,
    nodes: Vec<sys::CUgraphNode>,
}

impl Records<'_> {
    /// Adds a node recording `event` after `deps` to the root graph.
    fn add(
        &mut self,
        deps: &[sys::CUgraphNode],
        event: &CudaEvent,
        label: &str,
    ) -> Result<sys::CUgraphNode> {
        let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EVENT_RECORD);
        params.__bindgen_anon_1.eventRecord.event = event.cu_event();
        // SAFETY: the graph and its nodes are live (the caller holds the
        // graph and its guard); the params are initialised for an event
        // record node; the event outlives the exec made with it (dropped
        // before the events).
        let node = unsafe {
            result::add_node(
                self.graph.raw,
                deps,
                None,
                result::NodeParams::Generic(&mut params),
            )
        }
        .op_at("cuGraphAddNode", label)?;
        self.nodes.push(node);
        Ok(node)
    }

    /// Makes the record `record` (added by `add`) come before `node`: the
    /// edge goes when the record is removed.
    fn precede(&self, record: sys::CUgraphNode, node: sys::CUgraphNode, label: &str) -> Result<()> {
        // SAFETY: both nodes are live nodes of the root graph (the caller
        // holds the graph and its guard).
        unsafe { result::add_dependency(self.graph.raw, record, node) }
            .op_at("cuGraphAddDependencies", label)
    }

    /// Removes the records from the graph.
    fn remove(mut self) -> Result<()> {
        self.destroy()
    }

    /// Removes every record; if one cannot be removed (a driver failure),
    /// the graph is poisoned: it holds a record of an event about to be
    /// destroyed, so it must never be instantiated again.
    fn destroy(&mut self) -> Result<()> {
        let _entered = self.graph.enter()?;
        let mut failed = result::bind(&self.graph.ctx).op("cuCtxSetCurrent").err();
        for node in self.nodes.drain(..).rev() {
            if failed.is_none() {
                // SAFETY: a node added by `add`, removed once (drained),
                // under the graph's guard.
                failed = unsafe { result::destroy_node(node) }
                    .op("cuGraphDestroyNode")
                    .err();
            }
        }
        match failed {
            None => Ok(()),
            Some(error) => {
                self.graph.poison();
                Err(error)
            }
        }
    }
}

impl Drop for Records<'_> {
    fn drop(&mut self) {
        if !self.nodes.is_empty() {
            // On an error path: the error that got here is returned; one
            // from removing the records is kept in the context, as cudarc
            // keeps those of its drops.
            if let Err(GraphError::Driver { source, .. }) = self.destroy() {
                self.graph.ctx.record_err::<()>(Err(source));
            }
        }
    }
}
