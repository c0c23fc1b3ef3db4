//! Kernel nodes: arguments encoded and checked, programmatic edges,
//! priorities.

use super::*;

impl<'a> Graph<'a> {
    /// Adds a kernel node: `kernel<<<config>>>(args)` after `deps`.
    ///
    /// # Errors
    /// As every node-adding method (see [`Graph`](crate::Graph#errors));
    /// [`GraphError::InvalidArguments`] for a launch configuration with a
    /// zero dimension or over 1,024 threads per block, or arguments that
    /// fail the kernel's declared checks; [`GraphError::ForeignHandle`]
    /// for an argument of another graph or context; [`GraphError::Driver`]
    /// when the device refuses the launch configuration (too much shared
    /// memory, say).
    pub fn add_kernel<A: KernelArgs>(
        &mut self,
        label: &str,
        kernel: &Kernel<A>,
        config: LaunchConfig,
        args: A::Args<'a>,
        deps: &[Node],
    ) -> Result<KernelNode<A>> {
        self.add_kernel_with_edges(label, kernel, config, args, deps, None)
    }

    /// Adds a kernel node whose incoming edges carry `edges[i]` from
    /// `deps[i]` (programmatic dependent launch).
    ///
    /// # Errors
    /// As [`Graph::add_kernel`]; [`GraphError::InvalidArguments`] when
    /// `edges` does not have one kind per dependency;
    /// [`GraphError::Unsupported`] for a kernel not declared PDL-aware after
    /// a programmatic edge; [`GraphError::Driver`] for a dependency that
    /// cannot take its kind (a programmatic edge needs a kernel on both ends).
    pub fn add_kernel_with_edges<A: KernelArgs>(
        &mut self,
        label: &str,
        kernel: &Kernel<A>,
        config: LaunchConfig,
        args: A::Args<'a>,
        deps: &[Node],
        edges: Option<&[EdgeKind]>,
    ) -> Result<KernelNode<A>> {
        self.add_labelled_kernel(label.into(), kernel, config, args, deps, edges)
    }

    /// As `add_kernel_with_edges`, with a label a repeated block may have
    /// left unspelled. (Always inlined: one call a node, not two; it is
    /// made once per kernel type and caller, not per node.)
    #[inline(always)]
    fn add_labelled_kernel<A: KernelArgs>(
        &mut self,
        label: NodeLabel<'_>,
        kernel: &Kernel<A>,
        config: LaunchConfig,
        args: A::Args<'a>,
        deps: &[Node],
        edges: Option<&[EdgeKind]>,
    ) -> Result<KernelNode<A>> {
        if !kernel.is_pdl_aware() && edges.is_some_and(|e| e.iter().any(|k| k.is_programmatic())) {
            return Err(not_pdl_aware(&label.to_string(), kernel.name()));
        }
        // Encoded in place: the encoder is a few hundred bytes, not worth
        // moving between the generic and the shared half.
        let mut encoded = ArgEncoder::default();
        let encoding = A::encode(&args, &mut encoded)
            .and_then(|()| encoded.check_aliasing(kernel.is_no_alias()));
        let node = self.add_encoded_kernel(
            label,
            (kernel.function(), kernel.is_of_other_context(&self.ctx)),
            &config,
            (&encoded, encoding),
            deps,
            edges,
        )?;
        Ok(KernelNode {
            node,
            config,
            function: kernel.function().cu_function(),
            no_alias: kernel.is_no_alias(),
            _args: PhantomData,
        })
    }

    /// What generated builders call for each kernel node whose edges are
    /// all full (else [`Graph::__add_kernel_with_edges`]): adds it unless an
    /// earlier node of the build failed, and keeps a failure in `failure`
    /// instead of returning it (the handle is then [`KernelNode::UNSET`],
    /// never used: the builder settles before any other node and at the
    /// end, returning the first failure). With no error path per node, a
    /// builder of thousands of kernels compiles in linear time; with one,
    /// LLVM's MemCpyOpt went quadratic (18 s for 1,000 nodes, now 3.4 s).
    #[doc(hidden)]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub fn __add_kernel<'l, A: KernelArgs>(
        &mut self,
        failure: &mut Option<GraphError>,
        label: impl Into<NodeLabel<'l>>,
        kernel: &Kernel<A>,
        config: LaunchConfig,
        args: A::Args<'a>,
        deps: &[Node],
    ) -> KernelNode<A> {
        // Not through `__add_kernel_with_edges`: one call a node, not two.
        if failure.is_none() {
            match self.add_labelled_kernel(label.into(), kernel, config, args, deps, None) {
                Ok(node) => return node,
                Err(error) => *failure = Some(error),
            }
        }
        KernelNode::UNSET
    }

    /// [`Graph::__add_kernel`] with the kinds of the edges from `deps`
    /// (programmatic, launch-order): most kernel nodes have only full
    /// edges, and their builders pass no kinds (fewer tokens per node).
    #[doc(hidden)]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub fn __add_kernel_with_edges<'l, A: KernelArgs>(
        &mut self,
        failure: &mut Option<GraphError>,
        label: impl Into<NodeLabel<'l>>,
        kernel: &Kernel<A>,
        config: LaunchConfig,
        args: A::Args<'a>,
        deps: &[Node],
        edges: Option<&[EdgeKind]>,
    ) -> KernelNode<A> {
        if failure.is_none() {
            match self.add_labelled_kernel(label.into(), kernel, config, args, deps, edges) {
                Ok(node) => return node,
                Err(error) => *failure = Some(error),
            }
        }
        KernelNode::UNSET
    }

    /// The part of adding a kernel node that does not depend on its
    /// parameter types (compiled once, optimized, in this crate).
    #[inline(never)]
    fn add_encoded_kernel(
        &mut self,
        label: NodeLabel<'_>,
        (function, of_other_context): (&cudarc::driver::CudaFunction, bool),
        config: &LaunchConfig,
        (encoded, encoding): (&ArgEncoder<'a>, std::result::Result<(), ArgumentRefusal>),
        deps: &[Node],
        edges: Option<&[EdgeKind]>,
    ) -> Result<Node> {
        // Before the bounds: the part's length (0) says nothing.
        crate::buffer::refuse_out_of_range(label, encoded.uses())?;
        if let Err(reason) = config
            .validate()
            .and(encoding)
            .and_then(|()| encoded.check_bounds(config))
        {
            return Err(GraphError::arguments(&label.to_string(), reason));
        }
        self.owner.check_poisoned()?;
        // The driver runs a kernel node in its function's context (the
        // node's context field is ignored when a function is set): a
        // kernel loaded in another context would run there, on addresses
        // of this one.
        if of_other_context {
            return Err(GraphError::foreign(
                Foreign::Kernel,
                Some(&label.to_string()),
                "add a node",
            ));
        }
        if !encoded.conds().is_empty() {
            self.check_setters(&label.to_string(), deps, encoded.conds())?;
        }
        if encoded
            .execs()
            .iter()
            .any(|target| !target.is_of(&self.ctx))
        {
            return Err(foreign_device_exec(&label.to_string(), "add_kernel"));
        }
        // A null context means the current one, which `add_raw` binds to
        // the graph's context before adding (as hand-written driver code
        // passes it).
        let node = with_kernel_params(
            function.cu_function(),
            config,
            encoded,
            std::ptr::null_mut(),
            |params| {
                let params = result::NodeParams::Kernel(params);
                self.add_raw(label, NodeKind::Kernel, deps, edges, encoded.uses(), params)
            },
        )?;
        for handle in encoded.conds() {
            self.registry.setters.push(handle.raw(), node.index);
        }
        if !encoded.execs().is_empty() {
            keep_device_targets(&mut lock(&self.resources), encoded.execs());
        }
        // Consecutive nodes of one kernel skip the lock.
        if self.last_function != function.cu_function() {
            keep_function(&mut lock(&self.resources), function);
            self.last_function = function.cu_function();
        }
        Ok(node)
    }

    /// Sets a kernel node's scheduling priority (effective when the exec is
    /// instantiated with `use_node_priority`).
    ///
    /// # Errors
    /// [`GraphError::ForeignHandle`] for a node of
    /// another graph; [`GraphError::Driver`] when the driver
    /// refuses.
    pub fn set_priority<A>(&mut self, node: &KernelNode<A>, priority: i32) -> Result<()> {
        let _entered = self.owner.enter()?;
        let (raw, label) = self.node_raw(node.node)?;
        // SAFETY: a zeroed attribute value is valid; we set the priority member.
        let mut value: sys::CUkernelNodeAttrValue = unsafe { std::mem::zeroed() };
        value.priority = priority;
        // SAFETY: the node is a live kernel node of this graph.
        unsafe {
            sys::cuGraphKernelNodeSetAttribute(
                raw,
                sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PRIORITY,
                &value,
            )
        }
        .result()
        .op_at("cuGraphKernelNodeSetAttribute", &label)
    }

    pub(crate) fn node_raw(&self, node: Node) -> Result<(sys::CUgraphNode, String)> {
        let registry = self.registry();
        match registry.nodes.get(node.index as usize) {
            Some(info) if node.graph == self.instance => {
                Ok((info.raw, registry.label(node.index as usize).to_string()))
            }
            _ => Err(GraphError::foreign(
                crate::error::Foreign::Node,
                None,
                "Graph::set_priority",
            )),
        }
    }
}

/// A device exec of another context value than the graph's: its slices,
/// tracked at the graph's launches, are tracked by that value (see
/// `Graph::bind`).
#[cold]
pub(crate) fn foreign_device_exec(label: &str, operation: &'static str) -> GraphError {
    GraphError::foreign(crate::error::Foreign::DeviceExec, Some(label), operation)
}

/// A programmatic edge into a kernel that does not wait on its predecessor
/// would let it read their memory early: refused.
#[cold]
fn not_pdl_aware(label: &str, kernel: &str) -> GraphError {
    GraphError::unsupported(
        "add_kernel_with_edges",
        Some(label),
        Unsupported::NotPdlAware {
            kernel: kernel.to_string(),
        },
    )
}

/// Calls `f` with kernel node parameters for `function<<<config>>>` with
/// the `encoded` arguments, in context `ctx` (null: the current one). The
/// parameters point into storage that lives until `f` returns.
#[inline]
pub(crate) fn with_kernel_params<R>(
    function: sys::CUfunction,
    config: &LaunchConfig,
    encoded: &ArgEncoder<'_>,
    ctx: sys::CUcontext,
    f: impl FnOnce(&sys::CUDA_KERNEL_NODE_PARAMS_v2) -> R,
) -> R {
    let count = encoded.values().1.len();
    let mut pointers = crate::kernel::param_pointers(encoded);
    let params = sys::CUDA_KERNEL_NODE_PARAMS_v2 {
        func: function,
        gridDimX: config.grid.x,
        gridDimY: config.grid.y,
        gridDimZ: config.grid.z,
        blockDimX: config.block.x,
        blockDimY: config.block.y,
        blockDimZ: config.block.z,
        sharedMemBytes: config.shared_mem_bytes,
        kernelParams: if count == 0 {
            std::ptr::null_mut()
        } else {
            pointers.as_mut_ptr()
        },
        extra: std::ptr::null_mut(),
        kern: std::ptr::null_mut(),
        ctx,
    };
    f(&params)
}

/// Keeps `function`'s module loaded for the graph's nodes, once per
/// function: graphs that share resources (`new_sharing`, a loop that
/// rebuilds and updates every iteration) add the same kernels again, and a
/// list of every addition grew by one kernel a rebuild, for the life of
/// the original graph. (An entry keeps its module, so no other function
/// can have the handle it compares by.)
pub(crate) fn keep_function(
    resources: &mut Resources<'_>,
    function: &cudarc::driver::CudaFunction,
) {
    let raw = function.cu_function();
    if !resources.functions.iter().any(|f| f.cu_function() == raw) {
        resources.functions.push(function.clone());
    }
}

/// Keeps the execs a kernel node launches from the device, each once (as
/// [`keep_function`]; per-node updates add them too). A target is the same
/// only with the same exec handle and the same tracked set. (While a
/// `DeviceExec` lives it borrows its exec, which then cannot be updated to
/// track another set; the second comparison keeps that from mattering.)
pub(crate) fn keep_device_targets<'a>(resources: &mut Resources<'a>, targets: &[DeviceTarget<'a>]) {
    for target in targets {
        if !resources
            .device_targets
            .iter()
            .any(|kept| kept.same_as(target))
        {
            resources.device_targets.push(target.clone());
        }
    }
}
