//! Conditional nodes (CUDA 12.8+ for IF/ELSE and SWITCH): a handle, set from
//! the device with `cudaGraphSetConditional` or by its default at each
//! launch, selects which body graph runs, or whether a WHILE body runs again.
//! Bodies are built by closures that receive the body as a `Graph`.

use crate::error::{DriverResultExt, Foreign, GraphError, OrderRule, Result, Unsupported};
use crate::graph::{zeroed_params, Graph, SharedRegistry};
pub use crate::handle::CondHandle;
use crate::node::{Node, NodeKind};
use crate::result;
use cudarc::driver::sys;
use std::sync::Arc;

/// Which conditional node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conditional {
    If { with_else: bool },
    While,
    Switch { arms: u32 },
}

impl<'a> Graph<'a> {
    /// A conditional handle for a conditional node of this graph. With a
    /// default, the handle is reset to it at the start of every launch.
    ///
    /// # Errors
    /// [`GraphError::Driver`] when the driver cannot make the
    /// handle; [`GraphError::Poisoned`] for a graph whose body
    /// was replaced.
    pub fn cond_handle(&mut self, default: Option<u32>) -> Result<CondHandle> {
        let flags = if default.is_some() {
            sys::CU_GRAPH_COND_ASSIGN_DEFAULT
        } else {
            0
        };
        let _entered = self.owner.enter()?;
        self.ctx.bind_to_thread().op("cuCtxSetCurrent")?;
        // SAFETY: the graph and context are live.
        let raw = unsafe {
            result::conditional_handle_create(
                self.raw,
                self.ctx.cu_ctx(),
                default.unwrap_or(0),
                flags,
            )
        }
        .op("cuGraphConditionalHandleCreate")?;
        self.registry.cond_handles += 1;
        Ok(CondHandle::new(raw, self.instance, self.level))
    }

    /// `if handle { then }`: runs the body when the handle is non-zero.
    ///
    /// # Errors
    /// As every node-adding method (see [`Graph`](crate::Graph#errors));
    /// [`GraphError::ForeignHandle`] for a handle not created
    /// on this graph (or its level); [`GraphError::Driver`] when
    /// the driver refuses the conditional node; and what `body` returns.
    pub fn add_if(
        &mut self,
        label: &str,
        handle: CondHandle,
        deps: &[Node],
        then: impl FnOnce(&mut Graph<'a>) -> Result<()>,
    ) -> Result<Node> {
        let mut then = Some(then);
        self.add_conditional(
            label,
            handle,
            Conditional::If { with_else: false },
            deps,
            |_, body| then.take().map_or(Ok(()), |f| f(body)),
        )
    }

    /// `if handle { then } else { otherwise }`.
    ///
    /// # Errors
    /// As [`Graph::add_if`](crate::Graph::add_if); IF/ELSE needs a CUDA 12.8 driver (an
    /// older one refuses the node).
    pub fn add_if_else(
        &mut self,
        label: &str,
        handle: CondHandle,
        deps: &[Node],
        then: impl FnOnce(&mut Graph<'a>) -> Result<()>,
        otherwise: impl FnOnce(&mut Graph<'a>) -> Result<()>,
    ) -> Result<Node> {
        let (mut then, mut otherwise) = (Some(then), Some(otherwise));
        self.add_conditional(
            label,
            handle,
            Conditional::If { with_else: true },
            deps,
            |arm, body| match arm {
                0 => then.take().map_or(Ok(()), |f| f(body)),
                _ => otherwise.take().map_or(Ok(()), |f| f(body)),
            },
        )
    }

    /// `while handle { body }`: runs the body while the handle is non-zero;
    /// a kernel in the body must eventually set it to zero.
    ///
    /// # Errors
    /// As [`Graph::add_if`](crate::Graph::add_if).
    pub fn add_while(
        &mut self,
        label: &str,
        handle: CondHandle,
        deps: &[Node],
        body: impl FnOnce(&mut Graph<'a>) -> Result<()>,
    ) -> Result<Node> {
        let mut body = Some(body);
        self.add_conditional(label, handle, Conditional::While, deps, |_, graph| {
            body.take().map_or(Ok(()), |f| f(graph))
        })
    }

    /// `switch handle { 0 => ..., n-1 => ... }`: runs arm `handle`, or none
    /// if the value is out of range. `arm(i, body)` builds arm `i`.
    ///
    /// # Errors
    /// As [`Graph::add_if`](crate::Graph::add_if); SWITCH needs a CUDA 12.8 driver (an
    /// older one refuses the node).
    pub fn add_switch(
        &mut self,
        label: &str,
        handle: CondHandle,
        arms: u32,
        deps: &[Node],
        arm: impl FnMut(u32, &mut Graph<'a>) -> Result<()>,
    ) -> Result<Node> {
        if arms == 0 {
            return Err(GraphError::unsupported(
                "add_switch",
                Some(label),
                Unsupported::EmptySwitch,
            ));
        }
        self.add_conditional(label, handle, Conditional::Switch { arms }, deps, arm)
    }

    /// A kernel may set only handles of its own graph, and two kernels that
    /// set one handle must be ordered (CUDA: concurrent
    /// `cudaGraphSetConditional` calls on one handle are undefined), unless
    /// they sit in different arms of one conditional node.
    pub(crate) fn check_setters(
        &self,
        label: &str,
        deps: &[Node],
        handles: &[CondHandle],
    ) -> Result<()> {
        let registry = &self.registry;
        for handle in handles {
            if handle.graph() != self.instance {
                return Err(GraphError::foreign(
                    Foreign::ConditionalHandle,
                    Some(label),
                    "add a node",
                ));
            }
            let setters = registry.setters.of(handle.raw());
            self.check_handle_ordered(label, deps, setters, |other| OrderRule::HandleSetters {
                other,
            })?;
            // A conditional node already reading it: this setter comes
            // after it, or inside its bodies (as a `while` body's does).
            let readers = registry.readers.of(handle.raw());
            self.check_handle_ordered(label, deps, readers, |other| OrderRule::HandleSetAndRead {
                other,
            })?;
        }
        Ok(())
    }

    /// That every node of `others` (the setters or readers of one handle)
    /// is ordered before a new node with `deps` here (or holds it in a
    /// body), else `rule` naming the first that is not: two sets, or a set
    /// and a read, of one handle that nothing orders race, whatever the
    /// macro saw (a handle carried in a cell reaches a kernel unseen).
    fn check_handle_ordered(
        &self,
        label: &str,
        deps: &[Node],
        others: &[u32],
        rule: impl FnOnce(String) -> OrderRule,
    ) -> Result<()> {
        let registry = &self.registry;
        match others
            .iter()
            .find(|&&other| !registry.ordered_before_new(other, self.level, self.holder, deps))
        {
            Some(&other) => Err(GraphError::unordered(
                label,
                rule(registry.label(other as usize).to_string()),
            )),
            None => Ok(()),
        }
    }

    /// Whether `level` is this graph's, or that of a graph holding this
    /// body (through the conditional nodes around it).
    fn level_encloses(&self, level: u64) -> bool {
        level == self.level
            || self
                .holder
                .is_some_and(|h| self.registry().holders(h).iter().any(|&(_, l)| l == level))
    }

    fn add_conditional(
        &mut self,
        label: &str,
        handle: CondHandle,
        kind: Conditional,
        deps: &[Node],
        mut build: impl FnMut(u32, &mut Graph<'a>) -> Result<()>,
    ) -> Result<Node> {
        let foreign = |what| GraphError::foreign(what, Some(label), "add a conditional node");
        if handle.graph() != self.instance {
            return Err(foreign(crate::error::Foreign::ConditionalHandle));
        }
        // CUDA: a handle drives a conditional node of the graph it was
        // made on or of one of its children (the bodies inside it).
        if !self.level_encloses(handle.level()) {
            return Err(foreign(
                crate::error::Foreign::ConditionalHandleOfOtherLevel,
            ));
        }
        let (type_, size) = match kind {
            Conditional::If { with_else } => (
                sys::CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_IF,
                if with_else { 2 } else { 1 },
            ),
            Conditional::While => (sys::CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_WHILE, 1),
            Conditional::Switch { arms } => (
                sys::CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_SWITCH,
                arms,
            ),
        };
        // Its handle's setters so far come before it.
        let setters = self.registry().setters.of(handle.raw());
        self.check_handle_ordered(label, deps, setters, |other| OrderRule::HandleSetAndRead {
            other,
        })?;
        let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_CONDITIONAL);
        params.__bindgen_anon_1.conditional = sys::CUDA_CONDITIONAL_NODE_PARAMS {
            handle: handle.raw(),
            type_,
            size,
            // Output: the driver points it at a CUDA-owned array of bodies.
            phGraph_out: std::ptr::null_mut(),
            ctx: self.ctx.cu_ctx(),
        };
        let node = self.add_raw(
            label.into(),
            NodeKind::Conditional,
            deps,
            None,
            &[],
            result::NodeParams::Generic(&mut params),
        )?;
        self.registry.readers.push(handle.raw(), node.index);
        // SAFETY: the driver set `phGraph_out` to an array of `size` body
        // graphs owned by the conditional node, valid for the node's lifetime.
        let bodies: Vec<sys::CUgraph> = unsafe {
            let out = params.__bindgen_anon_1.conditional.phGraph_out;
            if out.is_null() {
                // The driver said it made the node, and gave no bodies.
                return Err(GraphError::driver(
                    "cuGraphAddNode (no conditional body graphs returned)",
                    sys::CUresult::CUDA_ERROR_UNKNOWN,
                    Some(label),
                ));
            }
            std::slice::from_raw_parts(out, size as usize).to_vec()
        };
        for (arm, &raw) in bodies.iter().enumerate() {
            let body = self.body(raw, node.index);
            let level = body.level;
            let mut scope = BodyScope {
                body,
                level,
                parent: &mut *self,
            };
            let built = build(arm as u32, &mut scope.body);
            drop(scope);
            // A replaced body poisoned the graph family (see BodyScope).
            let _entered = self.owner.enter()?;
            built?;
        }
        Ok(node)
    }
}

/// A body being built. The body holds its parent's registry meanwhile and
/// hands it back on drop, also when the builder fails or panics.
///
/// The builder gets `&mut Graph`, so it could `mem::swap` the body with
/// another graph: the records would then be in a graph the user holds, and
/// the one here would be foreign. The body's level identifies it; if it is
/// not the one made here, the whole graph family is poisoned (every later
/// call on it, and on the escaped body, is refused) and nothing foreign is
/// taken in.
struct BodyScope<'p, 'a> {
    body: Graph<'a>,
    level: u64,
    parent: &'p mut Graph<'a>,
}

impl Drop for BodyScope<'_, '_> {
    fn drop(&mut self) {
        if self.body.level == self.level && Arc::ptr_eq(&self.body.owner, &self.parent.owner) {
            self.parent.registry = std::mem::take(&mut self.body.registry);
        } else {
            self.parent.owner.poison();
            self.body.owner.poison();
            self.parent.registry = SharedRegistry::default();
        }
    }
}
