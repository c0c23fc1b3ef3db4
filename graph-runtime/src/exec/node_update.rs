//! Per-node updates of an exec: kernel arguments, enabling and disabling,
//! and the typed accessors `cuda_graph!` generates over them.

use super::*;
use crate::error::Foreign;

impl<'a> Exec<'a> {
    pub(super) fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The raw handle and kind of one of this exec's nodes; a node of
    /// another graph is refused.
    pub(super) fn node_handle(
        &self,
        node: Node,
        operation: &'static str,
    ) -> Result<(sys::CUgraphNode, crate::node::NodeKind)> {
        let foreign = || GraphError::foreign(Foreign::Node, None, operation);
        if !self.instances.contains(&node.graph) {
            return Err(foreign());
        }
        let registry = self.registry();
        let info = registry
            .nodes
            .get(node.index as usize)
            .ok_or_else(foreign)?;
        Ok((info.raw, info.kind))
    }

    /// The label of a node `node_handle` accepted.
    pub(super) fn node_label(&self, node: Node) -> String {
        self.registry().label(node.index as usize).to_string()
    }

    /// Sets a kernel node's arguments in this exec (the graph is unchanged).
    /// Buffers must be bound to the graph this exec was made or updated from.
    ///
    /// # Errors
    /// [`GraphError::ForeignHandle`] for a node of
    /// another graph or a buffer that is not this graph's;
    /// [`GraphError::InvalidArguments`], [`GraphError::ReadOnlyWrite`],
    /// [`GraphError::Unordered`] or [`GraphError::NodeUpdateRefused`] naming
    /// the node for arguments it refuses;
    /// [`GraphError::Driver`] when the driver refuses the
    /// update.
    pub fn set_kernel_args<A: KernelArgs>(
        &mut self,
        node: &KernelNode<A>,
        args: A::Args<'a>,
    ) -> Result<()> {
        let mut encoded = ArgEncoder::default();
        let encoding =
            A::encode(&args, &mut encoded).and_then(|()| encoded.check_aliasing(node.no_alias));
        self.set_encoded_kernel_args(node.node, node.function, &node.config, &encoded, encoding)
    }

    /// The part of `set_kernel_args` that does not depend on the parameter
    /// types (compiled once, optimized, in this crate). The label is looked
    /// up only for an error.
    #[inline(never)]
    pub(super) fn set_encoded_kernel_args(
        &mut self,
        node: Node,
        function: sys::CUfunction,
        config: &LaunchConfig,
        encoded: &ArgEncoder<'a>,
        encoding: std::result::Result<(), ArgumentRefusal>,
    ) -> Result<()> {
        let (raw, _) = self.node_handle(node, "Exec::set_kernel_args")?;
        // Spelled only for an error: a repeated node's label is made.
        let label = || self.node_label(node);
        crate::buffer::refuse_out_of_range(
            std::fmt::from_fn(|f| f.write_str(&label())),
            encoded.uses(),
        )?;
        if let Err(reason) = config
            .validate()
            .and(encoding)
            .and_then(|()| encoded.check_bounds(config))
        {
            return Err(GraphError::arguments(&label(), reason));
        }
        for used in encoded.uses() {
            let foreign = |what| GraphError::foreign(what, Some(&label()), "Exec::set_kernel_args");
            if used.root != self.resource_id {
                return Err(foreign(Foreign::Buffer));
            }
            if used.write && !used.writable {
                return Err(GraphError::ReadOnlyWrite { label: label() });
            }
            // The macro's race check covers the memory the node was built
            // with (`built_uses`).
            if !self.registry.built_uses.allows(node.index, used) {
                return Err(GraphError::NodeUpdateRefused {
                    label: label(),
                    reason: crate::error::NodeUpdateRefusal::OtherMemory,
                });
            }
            // The same lifetime rules as when the graph was built.
            if let Some(alloc) = used.alloc {
                let registry = &self.registry;
                if alloc.graph != self.instances[0] || alloc.index as usize >= registry.allocs.len()
                {
                    return Err(foreign(Foreign::Allocation));
                }
                if let Some(rule) = registry.alloc_use_error(node.index as usize, alloc.index) {
                    return Err(GraphError::unordered(&label(), rule));
                }
            }
        }
        // A kernel may go on setting the handles it set when built, and no
        // other: a new setter could race with another setter of the handle.
        for handle in encoded.conds() {
            // Raw handles of two graphs may be equal: the graph first.
            if !self.instances.contains(&handle.graph()) {
                return Err(GraphError::foreign(
                    Foreign::ConditionalHandle,
                    Some(&label()),
                    "Exec::set_kernel_args",
                ));
            }
            if !self.registry.setters.contains(handle.raw(), node.index) {
                return Err(GraphError::NodeUpdateRefused {
                    label: label(),
                    reason: crate::error::NodeUpdateRefusal::OtherConditionalHandles,
                });
            }
        }
        if encoded
            .execs()
            .iter()
            .any(|target| !target.is_of(&self.ctx))
        {
            return Err(crate::graph::foreign_device_exec(
                &label(),
                "Exec::set_kernel_args",
            ));
        }
        if !encoded.execs().is_empty() {
            crate::graph::keep_device_targets(&mut lock(&self.resources), encoded.execs());
        }
        let guard = self.graph.lock();
        self.ctx.bind_to_thread().op("cuCtxSetCurrent")?;
        let set = with_kernel_params(function, config, encoded, self.ctx.cu_ctx(), |params| {
            // SAFETY: the node belongs to the graph this exec was
            // instantiated from; the params (and the argument storage they
            // point to) are live for the call.
            unsafe { result::exec_kernel_node_set_params(self.raw, raw, params) }
        })
        .map_err(|e| GraphError::driver("cuGraphExecKernelNodeSetParams", e.0, Some(&label())));
        drop(guard);
        if !encoded.execs().is_empty() {
            // The launches now track the new device target's sets too.
            self.refresh_sets();
        }
        set
    }

    /// Enables or disables a kernel, copy or fill node in this exec.
    ///
    /// # Errors
    /// [`GraphError::ForeignHandle`] for a node of
    /// another graph; [`GraphError::NodeUpdateRefused`] for a
    /// node the driver cannot disable (only kernel, copy and fill nodes can be);
    /// [`GraphError::Driver`] when the driver refuses.
    pub fn set_enabled(&mut self, node: Node, enabled: bool) -> Result<()> {
        let (raw, kind) = self.node_handle(node, "Exec::set_enabled")?;
        let label = || self.node_label(node);
        if !kind.can_be_disabled() {
            return Err(GraphError::NodeUpdateRefused {
                label: label(),
                reason: crate::error::NodeUpdateRefusal::NotToggleable,
            });
        }
        // A kernel after a programmatic edge completes after the kernel
        // before it only by waiting for it: disabled, it waits for nothing,
        // and what the graph ordered after that kernel through it (a free
        // of its memory, a node racing with it) could run while it runs.
        if !enabled && self.registry.follows_programmatic_edge(node.index as usize) {
            return Err(GraphError::NodeUpdateRefused {
                label: label(),
                reason: crate::error::NodeUpdateRefusal::FollowsProgrammaticEdge,
            });
        }
        let _guard = self.graph.lock();
        self.ctx.bind_to_thread().op("cuCtxSetCurrent")?;
        // SAFETY: the node belongs to the graph this exec was instantiated from.
        unsafe { result::node_set_enabled(self.raw, raw, enabled) }
            .map_err(|e| GraphError::driver("cuGraphNodeSetEnabled", e.0, Some(&label())))
    }
}

/// The [`KernelNodeMut`] of a node of the declared kernel `K`: what the
/// exec accessors of a `cuda_graph!` graph return.
pub type KernelNodeMutOf<'e, 'a, K> = KernelNodeMut<'e, 'a, <K as crate::KernelDef>::Args>;

/// A kernel node of an exec, to change its arguments or enable it.
#[derive(Debug)]
pub struct KernelNodeMut<'e, 'a, A> {
    exec: &'e mut Exec<'a>,
    node: KernelNode<A>,
}

impl<'e, 'a, A: KernelArgs> KernelNodeMut<'e, 'a, A> {
    /// Used by `cuda_graph!`'s typed accessors; not part of the API.
    #[doc(hidden)]
    pub fn new(exec: &'e mut Exec<'a>, node: KernelNode<A>) -> Self {
        KernelNodeMut { exec, node }
    }

    /// Sets the node's kernel arguments in the exec.
    ///
    /// # Errors
    /// As [`Exec::set_kernel_args`](crate::Exec::set_kernel_args).
    pub fn set_args(&mut self, args: A::Args<'a>) -> Result<()> {
        self.exec.set_kernel_args(&self.node, args)
    }

    /// Enables or disables the node in the exec.
    ///
    /// # Errors
    /// As [`Exec::set_enabled`](crate::Exec::set_enabled).
    pub fn set_enabled(&mut self, enabled: bool) -> Result<()> {
        self.exec.set_enabled(self.node.node, enabled)
    }
}

/// A copy or fill node of an exec, or a kernel node whose arguments name
/// graph memory that `bound()` does not hold (an alloc scope's buffer), to
/// enable or disable it.
#[derive(Debug)]
pub struct NodeMut<'e, 'a> {
    exec: &'e mut Exec<'a>,
    node: Node,
}

impl<'e, 'a> NodeMut<'e, 'a> {
    /// Used by `cuda_graph!`'s typed accessors; not part of the API.
    #[doc(hidden)]
    pub fn new(exec: &'e mut Exec<'a>, node: Node) -> Self {
        NodeMut { exec, node }
    }

    /// Enables or disables the node in the exec.
    ///
    /// # Errors
    /// As [`Exec::set_enabled`](crate::Exec::set_enabled).
    pub fn set_enabled(&mut self, enabled: bool) -> Result<()> {
        self.exec.set_enabled(self.node, enabled)
    }
}
