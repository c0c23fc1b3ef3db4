//! The other node kinds (empty, event record and wait, child graphs) and
//! whole-graph operations: sharing, cloning, DOT, conditional bodies.

use super::*;

impl<'a> Graph<'a> {
    /// Adds an empty node (a join point).
    ///
    /// # Errors
    /// As every node-adding method (see [`Graph`](crate::Graph#errors)).
    pub fn add_empty(&mut self, label: &str, deps: &[Node]) -> Result<Node> {
        let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY);
        self.add_raw(
            label.into(),
            NodeKind::Empty,
            deps,
            None,
            &[],
            result::NodeParams::Generic(&mut params),
        )
    }

    /// Adds a node that records `event`.
    ///
    /// # Errors
    /// As every node-adding method (see [`Graph`](crate::Graph#errors));
    /// [`GraphError::ForeignHandle`] for an event of another context.
    pub fn add_event_record(
        &mut self,
        label: &str,
        event: &'a CudaEvent,
        deps: &[Node],
    ) -> Result<Node> {
        self.refuse_foreign_event(label, event)?;
        let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EVENT_RECORD);
        params.__bindgen_anon_1.eventRecord.event = event.cu_event();
        self.add_raw(
            label.into(),
            NodeKind::EventRecord,
            deps,
            None,
            &[],
            result::NodeParams::Generic(&mut params),
        )
    }

    /// Adds a node that waits for `event`.
    ///
    /// # Errors
    /// As every node-adding method (see [`Graph`](crate::Graph#errors));
    /// [`GraphError::ForeignHandle`] for an event of another context.
    pub fn add_event_wait(
        &mut self,
        label: &str,
        event: &'a CudaEvent,
        deps: &[Node],
    ) -> Result<Node> {
        self.refuse_foreign_event(label, event)?;
        let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_WAIT_EVENT);
        params.__bindgen_anon_1.eventWait = sys::CUDA_EVENT_WAIT_NODE_PARAMS {
            event: event.cu_event(),
        };
        self.add_raw(
            label.into(),
            NodeKind::EventWait,
            deps,
            None,
            &[],
            result::NodeParams::Generic(&mut params),
        )
    }

    fn refuse_foreign_event(&self, label: &str, event: &CudaEvent) -> Result<()> {
        // Any value of the graph's context: events are not tracked.
        match event.context().cu_ctx() == self.ctx.cu_ctx() {
            true => Ok(()),
            false => Err(GraphError::foreign(
                crate::error::Foreign::Event,
                Some(label),
                "add an event node",
            )),
        }
    }

    /// Adds a child graph node running a copy of `child`. The child's bound
    /// buffers, kernels and user objects are kept by this graph.
    ///
    /// # Errors
    /// As every node-adding method (see [`Graph`](crate::Graph#errors));
    /// [`GraphError::Unsupported`] for a child that is a conditional body, has conditional nodes, made a conditional handle, has host buffers, binds another graph's allocation, or copies host memory into a conditional body;
    /// [`GraphError::ForeignHandle`] for a child of another context or `CudaContext` value.
    pub fn add_child(&mut self, label: &str, child: Graph<'a>, deps: &[Node]) -> Result<Node> {
        if !self.same_context(&child.ctx) {
            // Its bound slices are tracked by its context value, which
            // counts its streams apart from this graph's (see `bind`).
            return Err(GraphError::foreign(
                crate::error::Foreign::ChildGraph,
                Some(label),
                "add_child",
            ));
        }
        if child.is_body() {
            return Err(GraphError::unsupported(
                "add_child",
                Some(label),
                Unsupported::BodyAsChild,
            ));
        }
        if child.registry.host_buffers() > 0 {
            // Its execs and this graph's could write them at once.
            return Err(GraphError::unsupported(
                "add_child",
                Some(label),
                Unsupported::HostBuffersInChild,
            ));
        }
        if child.registry.allocs.iter().any(|a| a.node().is_none()) {
            // Its uses could not be ordered after the launch that makes it.
            return Err(GraphError::unsupported(
                "add_child",
                Some(label),
                Unsupported::EscapedInChild,
            ));
        }
        if child
            .registry()
            .nodes
            .iter()
            .any(|n| n.kind == NodeKind::Conditional)
        {
            // CUDA refuses them (CUDA_CHILD_GRAPH_NODE_PARAMS: "must not
            // contain conditional nodes"). Refused here, typed, whatever the
            // driver: this graph does not see the child's handles, so two
            // copies of one child would drive two conditional nodes by one
            // handle, with setters no check of this graph orders.
            return Err(GraphError::unsupported(
                "add_child",
                Some(label),
                Unsupported::ConditionalInChild,
            ));
        }
        if child.registry().cond_handles > 0 {
            // Without a conditional node, a handle is still the child's:
            // its kernels would set a handle of a graph the driver only
            // copies (the copy's nodes keep the original's value), and two
            // copies of the child would set it unordered, where no check
            // of this graph sees them.
            return Err(GraphError::unsupported(
                "add_child",
                Some(label),
                Unsupported::ConditionalHandleInChild,
            ));
        }
        if child.registry.host_copies && self.is_body() {
            return Err(GraphError::unsupported(
                "add_child",
                Some(label),
                Unsupported::HostCopyChildInBody,
            ));
        }
        // The driver clones the child: no exec of the child may use it
        // meanwhile (and a poisoned child is refused).
        let child_entered = child.owner.enter_as_child()?;
        let node = self.add_child_node(label, deps, &[], child.raw)?;
        drop(child_entered);
        let _entered = self.owner.enter()?;
        // Keep what the child's nodes reference alive as long as this graph.
        let objects = child.registry().user_objects.clone();
        for &object in &objects {
            // SAFETY: the child graph holds a reference, so the object is live.
            unsafe {
                result::graph_retain_user_object(self.owner.raw, object as sys::CUuserObject)
            }
            .op_at("cuGraphRetainUserObject", label)?;
        }
        self.registry.user_objects.extend(objects);
        self.registry.host_copies |= child.registry.host_copies;
        if child.registry.order != 0 {
            // The child node's nodes keep the child's order.
            self.registry.order = next_id();
        }
        for faults in &child.registry().host_faults {
            if !self
                .registry
                .host_faults
                .iter()
                .any(|f| Arc::ptr_eq(f, faults))
            {
                self.registry.host_faults.push(faults.clone());
            }
        }
        if !Arc::ptr_eq(&self.resources, &child.resources) {
            let mut children = lock(&child.resources).children.clone();
            children.push(child.resources.clone());
            let mut mine = lock(&self.resources);
            for c in children {
                if !Arc::ptr_eq(&c, &self.resources)
                    && !mine.children.iter().any(|m| Arc::ptr_eq(m, &c))
                {
                    mine.children.push(c);
                }
            }
        }
        Ok(node)
    }

    /// A new, empty graph sharing this graph's bound buffers, to be added
    /// with [`Graph::add_child`]: its nodes may use this graph's `Buf`s.
    ///
    /// # Errors
    /// [`GraphError::Driver`] when the driver cannot make the
    /// graph; [`GraphError::Poisoned`].
    pub fn child_graph(&self) -> Result<Graph<'a>> {
        self.new_sharing()
    }

    /// A new, empty graph sharing this graph's bound buffers: rebuild a graph
    /// of the same topology with other scalars or other bound buffers, then
    /// update an exec with it ([`Exec::update`](crate::Exec::update)).
    ///
    /// # Errors
    /// As [`Graph::child_graph`](crate::Graph::child_graph).
    pub fn new_sharing(&self) -> Result<Graph<'a>> {
        let raw = create_graph(&self.ctx)?;
        Ok(Graph::root(
            raw,
            &self.ctx,
            self.resource_id,
            self.resources.clone(),
            SharedRegistry::with_spare_records(),
        ))
    }

    /// Writes the graph in Graphviz DOT, as the driver describes it.
    ///
    /// # Errors
    /// [`GraphError::Driver`] when the driver cannot print the graph; [`GraphError::Io`] when its temporary file cannot be read back.
    pub fn dot(&self) -> Result<String> {
        let path = std::env::temp_dir().join(format!(
            "cuda-graph-{}-{}.dot",
            std::process::id(),
            next_id()
        ));
        let c_path = std::ffi::CString::new(path.to_string_lossy().into_owned()).map_err(|e| {
            GraphError::Io {
                operation: "dot: naming the temporary file",
                source: std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
            }
        })?;
        let _entered = self.owner.enter()?;
        self.ctx.bind_to_thread().op("cuCtxSetCurrent")?;
        let flags = sys::CUgraphDebugDot_flags::CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE as u32;
        // SAFETY: the graph is live; the path is NUL-terminated.
        unsafe { result::debug_dot_print(self.raw, &c_path, flags) }.op("cuGraphDebugDotPrint")?;
        let text = std::fs::read_to_string(&path).map_err(|source| GraphError::Io {
            operation: "dot: reading the driver's output back",
            source,
        });
        let _ = std::fs::remove_file(&path);
        text
    }

    /// A copy of this graph (`cuGraphClone`) sharing its bound buffers.
    /// Node handles of the original are not valid with the clone.
    ///
    /// # Errors
    /// [`GraphError::Driver`] when the driver cannot clone the
    /// graph (on an H100 with driver 580, `cuGraphClone` returns
    /// `CUDA_ERROR_NOT_SUPPORTED` for a graph that made a conditional
    /// handle); [`GraphError::Unsupported`] for a conditional body.
    pub fn try_clone(&self) -> Result<Graph<'a>> {
        if self.is_body() {
            return Err(GraphError::unsupported(
                "try_clone",
                None,
                Unsupported::ConditionalBody,
            ));
        }
        let _entered = self.owner.enter()?;
        self.ctx.bind_to_thread().op("cuCtxSetCurrent")?;
        // SAFETY: the graph is live.
        let raw = unsafe { result::graph_clone(self.raw) }.op("cuGraphClone")?;
        // Own the clone at once, so an error below destroys it.
        let mut clone = Graph::root(
            raw,
            &self.ctx,
            self.resource_id,
            self.resources.clone(),
            SharedRegistry::default(),
        );
        let mut registry = self.registry.clone();
        for index in 0..registry.nodes.len() {
            let original = registry.nodes[index].raw;
            // SAFETY: `original` is a node of the graph `raw` was cloned from.
            let found = unsafe { result::find_in_clone(original, raw) }.map_err(|e| {
                GraphError::driver("cuGraphNodeFindInClone", e.0, Some(&registry.label(index)))
            })?;
            let info = &mut registry.nodes[index];
            info.raw = found;
            if info.level == self.level {
                info.level = clone.level;
            }
        }
        for &object in &registry.user_objects {
            // SAFETY: the original graph holds a reference, so it is live.
            unsafe { result::graph_retain_user_object(raw, object as sys::CUuserObject) }
                .op("cuGraphRetainUserObject")?;
        }
        // cuGraphClone does not say in which order it adds the nodes.
        registry.order = next_id();
        clone.registry = registry;
        // Host memory of its own, so an exec of its own: its copy and host
        // nodes are pointed at new buffers (see `host`).
        if !self.registry.host_rebinding.buffers.is_empty() {
            self.give_clone_host_memory(&mut clone)?;
        }
        Ok(clone)
    }

    /// Adds a child-graph node of `child` (a child graph, or a captured
    /// one): the driver clones it into the node, and the caller's graph
    /// stays its own.
    pub(crate) fn add_child_node(
        &mut self,
        label: &str,
        deps: &[Node],
        uses: &[BufferUse],
        child: CUgraph,
    ) -> Result<Node> {
        let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_GRAPH);
        // Other fields (13.x: the ownership) stay zero: the driver clones.
        params.__bindgen_anon_1.graph.graph = child;
        self.add_raw(
            label.into(),
            NodeKind::ChildGraph,
            deps,
            None,
            uses,
            result::NodeParams::Generic(&mut params),
        )
    }

    /// A body graph of the conditional node `top` (see `conditional`). It
    /// takes this graph's registry until it is dropped (`BodyScope`).
    pub(crate) fn body(&mut self, raw: CUgraph, holder: u32) -> Graph<'a> {
        Graph {
            raw,
            owner: self.owner.clone(),
            instance: self.instance,
            level: next_id(),
            top_node: Some(self.top_node.unwrap_or(holder)),
            holder: Some(holder),
            resource_id: self.resource_id,
            ctx: self.ctx.clone(),
            registry: std::mem::take(&mut self.registry),
            resources: self.resources.clone(),
            last_function: std::ptr::null_mut(),
            _borrows: PhantomData,
        }
    }

    pub(crate) fn has_memory_nodes(&self) -> bool {
        !self.registry().allocs.is_empty()
    }

    /// Whether two execs of the graph could not run side by side: graph
    /// memory (a CUDA rule) or host buffers (both would write them).
    pub(crate) fn needs_one_exec(&self) -> bool {
        self.has_memory_nodes() || self.registry.host_buffers() > 0
    }
}
