//! Whole-graph updates: `cuGraphExecUpdate`, its refusals explained, and
//! the fallback to re-instantiation.

use super::*;

impl<'a> Exec<'a> {
    /// Updates the exec from `graph`, which must have the same topology.
    /// On refusal, the error explains the driver's result and names the node.
    ///
    /// # Errors
    /// [`GraphError::Update`] when the driver refuses the update
    /// (explained, naming the node where it says which) or the graphs' memory differs
    /// (memory nodes, host buffers), or the driver could pair its nodes
    /// otherwise than the exec's node handles (it pairs them by its own
    /// order of them): its nodes, or a node's dependencies or their edge
    /// kinds, differ from the exec's graph's index by index, or the two
    /// graphs' node orders may differ (a profile reorders a graph; a clone
    /// and a graph holding a profiled or cloned child have an order of
    /// their own: execs made before a profile refuse the graph, execs made
    /// from a clone or after a profile refuse other builds); the exec is
    /// unchanged. [`GraphError::Unsupported`] for a conditional body.
    pub fn update(&mut self, graph: &Graph<'a>) -> Result<()> {
        if graph.is_body() {
            return Err(GraphError::unsupported(
                "update",
                None,
                Unsupported::ConditionalBody,
            ));
        }
        if graph.instance != self.instances[0]
            && (graph.needs_one_exec()
                || !self.registry.allocs.is_empty()
                || self.registry.host_buffers() > 0)
        {
            // Each graph's allocations live at that graph's addresses: the
            // exec's alloc nodes keep theirs while the other graph's kernels
            // would use its own.
            return Err(GraphError::Update {
                result: sys::CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED,
                reason: "a graph with memory nodes or host buffers cannot be updated from another graph (its allocations and buffers are other memory); instantiate that graph instead",
                label: None,
            });
        }
        if !Arc::ptr_eq(&graph.ctx, &self.ctx) {
            // Its bound slices are tracked by its context value, which
            // counts its streams apart from the exec's (see `Graph::bind`).
            return Err(GraphError::Update {
                result: sys::CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED,
                reason: "the graph is of another context, or of another `CudaContext` value of the exec's; build it with the exec's value (clone one `Arc<CudaContext>`)",
                label: None,
            });
        }
        if graph.registry().order != self.registry.order {
            // The driver pairs the exec's nodes with the graph's by its own
            // order of them: paired differently, a per-node update meant
            // for one node would reach another's work (GPU-tested:
            // `an_exec_made_before_a_profile_refuses_an_update_from_it`).
            return Err(GraphError::Update {
                result: sys::CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED,
                reason: "the graph's node order may differ from the exec's (a profile reorders a graph; a clone, and a graph holding a profiled or cloned child, have an order of their own: an exec made before a profile, from a clone or after a profile takes updates only from graphs of its order); instantiate that graph instead",
                label: None,
            });
        }
        if !self.registry.ptr_eq(&graph.registry) && !self.registry.same_shape(graph.registry()) {
            // Same topology for the driver, but its nodes added in another
            // order, or a node's dependencies given in another: the driver
            // would pair them otherwise than the exec's node handles.
            return Err(GraphError::Update {
                result: sys::CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED,
                reason: "the topology changed, or the nodes or their dependencies were added in another order than the exec's graph's (the driver would pair nodes otherwise than the exec's node handles); build it in the same order, or instantiate it",
                label: None,
            });
        }
        graph.owner.check_poisoned()?;
        let _guards = ordering::update_guards(&self.graph, &graph.owner);
        self.ctx.bind_to_thread().op("cuCtxSetCurrent")?;
        // SAFETY: zero is valid for the result info (null node handles).
        let mut info: sys::CUgraphExecUpdateResultInfo = unsafe { std::mem::zeroed() };
        // SAFETY: the exec and graph are live.
        if let Err(e) = unsafe { result::exec_update(self.raw, graph.raw, &mut info) } {
            if info.result == sys::CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_SUCCESS {
                return Err(GraphError::driver("cuGraphExecUpdate", e.0, None));
            }
            let registry = graph.registry();
            let label = registry
                .label_of(info.errorNode)
                .or_else(|| registry.label_of(info.errorFromNode));
            return Err(GraphError::Update {
                result: info.result,
                reason: explain_update(info.result),
                label,
            });
        }
        // The launches queued so far may still run kernels of the resources
        // replaced here: keep those until the stream is seen done.
        let replaced = std::mem::replace(&mut self.resources, graph.resources.clone());
        if !Arc::ptr_eq(&replaced, &self.resources) {
            // The exec stops tracking a set whose graph-owned buffers may
            // have their last use on its own stream, where loans through
            // other execs that share them copy with no check of this
            // exec's launches, which would no longer lock the set: a
            // launch's waits through cudarc could draw that stream into
            // another thread's capture under such a copy. The next launch
            // there makes a new own stream; nothing waits on the old one
            // any more (it lives while a set or the drop needs it).
            self.own_stream = None;
        }
        ordering::retire(&mut self.retired, self.last_stream.as_ref(), replaced);
        self.tracking = self.resources.clone();
        self.sets = ordering::tracked_sets(&self.tracking);
        self.resource_id = graph.resource_id;
        self.instances[1] = graph.instance;
        self.updated_faults.clone_from(&graph.registry.host_faults);
        // Same topology, so the same nodes; their handles are now the
        // other graph's.
        self.registry.setters.clone_from(&graph.registry.setters);
        // Per-node updates from now on keep to the other graph's memory; a
        // graph the macro did not check (the builder API's) has none to
        // keep to, and leaves the spans the macro checked.
        if graph.registry.built_uses.is_checked() || !self.registry.built_uses.is_checked() {
            self.registry
                .built_uses
                .clone_from(&graph.registry.built_uses);
        }
        // The other graph's bound allocations of other graphs (its memory
        // nodes are this graph's: the update was refused otherwise).
        self.escapes.retain(|(_, role)| *role == Role::Make);
        self.escapes
            .extend(escape_roles(&self.ctx, graph.registry(), true)?);
        Ok(())
    }

    /// Updates from `graph`, or, if the driver refuses the update,
    /// instantiates `graph` anew (with `options`) and says why.
    ///
    /// # Errors
    /// What [`Exec::update`](crate::Exec::update) returns other than a refusal, what
    /// [`Exec::synchronize`](crate::Exec::synchronize) returns for the wait for the last
    /// launch before a re-instantiation, and what
    /// [`Graph::instantiate_with`](crate::Graph::instantiate_with) returns (then the exec
    /// is unchanged).
    pub fn update_or_reinstantiate(
        &mut self,
        graph: &Graph<'a>,
        options: &InstantiateOptions<'_>,
    ) -> Result<UpdateOutcome> {
        match self.update(graph) {
            Ok(()) => Ok(UpdateOutcome::Updated),
            Err(reason @ GraphError::Update { .. }) => {
                // The slot may go only once the old exec's work is done: a
                // wait refused (its stream began a capture) leaves the exec
                // as it is, and its drop would keep the launch's resources,
                // the slot included.
                self.wait_for_last_launch()?;
                // This exec's one-exec slot goes to the new exec if it is
                // that graph's (a clone's): released first, it could be
                // taken by another thread's exec of the graph meanwhile. It
                // comes back if the instantiation fails; one of another
                // graph is released once the old exec is dropped.
                let mut slot = self._live.take();
                match graph.instantiate_reusing(options, &mut slot) {
                    Ok(exec) => {
                        // The old exec's drop waits for its launches (on
                        // its own stream too). The new one makes a stream
                        // of its own at its first launch there: the old
                        // one may hold what the old exec's launches left
                        // (graph-owned buffers' last use, an `Escaped`'s
                        // home), ordered by the old exec's states, not the
                        // new one's (see `update`).
                        *self = exec;
                        drop(slot);
                        Ok(UpdateOutcome::Reinstantiated { reason })
                    }
                    Err(error) => {
                        self._live = slot;
                        Err(error)
                    }
                }
            }
            Err(other) => Err(other),
        }
    }
}

fn explain_update(result: sys::CUgraphExecUpdateResult) -> &'static str {
    use sys::CUgraphExecUpdateResult as R;
    match result {
        R::CU_GRAPH_EXEC_UPDATE_SUCCESS => "the update succeeded",
        R::CU_GRAPH_EXEC_UPDATE_ERROR => {
            "the update failed for a reason the driver did not classify"
        }
        R::CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED => {
            "the topology changed (nodes or edges were added or removed)"
        }
        R::CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED => "a node's type changed",
        R::CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED => "a kernel node's function changed",
        R::CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED => {
            "a node's parameters changed in a way that cannot be updated"
        }
        R::CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED => {
            "something about the node is not supported by update"
        }
        R::CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE => {
            "a kernel function changed in an unsupported way"
        }
        R::CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED => "a node's attributes changed",
    }
}
