//! Instantiation: a graph's exec, its one-exec slot (graphs with memory
//! nodes or host buffers), its escaping allocations' roles, and the
//! driver's refusals explained.

use super::*;

impl<'a> Graph<'a> {
    /// Instantiates the graph with default options.
    ///
    /// # Errors
    /// As [`Graph::instantiate_with`](crate::Graph::instantiate_with).
    pub fn instantiate(&self) -> Result<Exec<'a>> {
        self.instantiate_with(&InstantiateOptions::default())
    }

    /// Instantiates the graph. A driver error names the node it concerns.
    ///
    /// # Errors
    /// [`GraphError::Instantiate`] naming the node the driver names;
    /// [`GraphError::SecondExec`] when the graph has memory nodes or host
    /// buffers and an exec of it lives; [`GraphError::Unsupported`] for a
    /// conditional body, or a device launch of a graph that copies host
    /// memory; [`GraphError::Poisoned`]; [`GraphError::Driver`] for another
    /// refusal of the driver (an upload, say).
    pub fn instantiate_with(&self, options: &InstantiateOptions<'_>) -> Result<Exec<'a>> {
        self.instantiate_reusing(options, &mut None)
    }

    /// As `instantiate_with`; the one-exec slot in `slot`, if it is this
    /// graph's, goes to the new exec (an exec being replaced hands its own
    /// over, so that no other exec can take it in between), and comes back
    /// if the instantiation fails.
    pub(super) fn instantiate_reusing(
        &self,
        options: &InstantiateOptions<'_>,
        slot: &mut Option<LiveExec>,
    ) -> Result<Exec<'a>> {
        if self.is_body() {
            return Err(GraphError::unsupported(
                "instantiate",
                None,
                Unsupported::ConditionalBody,
            ));
        }
        if options.device_launch && self.registry.host_copies {
            return Err(GraphError::unsupported(
                "instantiate",
                None,
                Unsupported::HostCopyInDeviceLaunch,
            ));
        }
        let (mut live, mut reused) = (None, false);
        if self.needs_one_exec() {
            match slot.take() {
                Some(own) if Arc::ptr_eq(&own.0, &self.owner) => {
                    (live, reused) = (Some(own), true);
                }
                other => {
                    *slot = other;
                    let live_execs = &self.owner.live_execs;
                    if live_execs.fetch_add(1, Ordering::AcqRel) > 0 {
                        live_execs.fetch_sub(1, Ordering::AcqRel);
                        return Err(GraphError::SecondExec);
                    }
                    live = Some(LiveExec(self.owner.clone()));
                }
            }
        }
        let made = self.instantiate_raw(options);
        let (raw, escapes) = match made {
            Ok(made) => made,
            Err(error) => {
                // A slot handed over goes back; one taken here is released.
                if reused {
                    *slot = live;
                }
                return Err(error);
            }
        };
        self.owner.share_with_exec();
        let resources = self.resources.clone();
        let tracking: Arc<dyn ResourceSet + 'a> = resources.clone();
        Ok(Exec {
            raw,
            owned: Arc::new(RawExec::new(raw, self.ctx.clone())),
            sets: crate::ordering::tracked_sets(&tracking),
            tracking,
            _original: resources.clone(),
            ctx: self.ctx.clone(),
            graph: self.owner.clone(),
            registry: self.registry.clone(),
            instances: [self.instance; 2],
            updated_faults: Vec::new(),
            last_stream: None,
            own_stream: None,
            launches: Default::default(),
            resource_id: self.resource_id,
            resources,
            retired: Vec::new(),
            device_launch: options.device_launch,
            escapes,
            _live: live,
            _borrows: PhantomData,
        })
    }

    /// The driver's instantiation and the exec's escape roles.
    fn instantiate_raw(
        &self,
        options: &InstantiateOptions<'_>,
    ) -> Result<(CUgraphExec, EscapeRoles)> {
        let _entered = self.owner.enter()?;
        // (As `create_graph`: without cudarc's swap of its stored error.)
        result::bind(&self.ctx).op("cuCtxSetCurrent")?;
        let mut params = sys::CUDA_GRAPH_INSTANTIATE_PARAMS {
            flags: options.flags(),
            hUploadStream: options
                .upload
                .map_or(std::ptr::null_mut(), |s| s.cu_stream()),
            hErrNode_out: std::ptr::null_mut(),
            result_out: sys::CUgraphInstantiateResult::CUDA_GRAPH_INSTANTIATE_SUCCESS,
        };
        // SAFETY: the graph is live; the upload stream, if any, is borrowed.
        let raw = unsafe { result::instantiate(self.raw, &mut params) }.map_err(|e| {
            GraphError::Instantiate {
                name: format!("{:?}", e.0),
                code: e.0 as u32,
                result: explain_instantiate(params.result_out).to_string(),
                label: self.registry().label_of(params.hErrNode_out),
            }
        })?;
        let escapes = escape_roles(&self.ctx, self.registry(), options.auto_free_on_launch)?;
        Ok((raw, escapes))
    }
}

fn explain_instantiate(result: sys::CUgraphInstantiateResult) -> &'static str {
    use sys::CUgraphInstantiateResult as R;
    match result {
        R::CUDA_GRAPH_INSTANTIATE_SUCCESS => "no instantiate result was reported",
        R::CUDA_GRAPH_INSTANTIATE_ERROR => "the graph could not be instantiated",
        R::CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE => "the graph's structure is invalid (a cycle, or memory nodes used wrongly)",
        R::CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED => "a node's operation is not supported with these flags (device launch allows only kernel, copy, fill and child graph nodes)",
        R::CUDA_GRAPH_INSTANTIATE_MULTIPLE_CTXS_NOT_SUPPORTED => "nodes from several contexts cannot be instantiated for device launch",
        R::CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED => "a conditional handle is not used by any conditional node",
    }
}

/// The allocations outliving a launch of a graph with `registry`: those
/// its alloc nodes make and leave live (a state each, unless the exec
/// auto-frees them on launch), and those of other graphs it binds.
pub(super) fn escape_roles(
    ctx: &Arc<CudaContext>,
    registry: &Registry,
    auto_free_on_launch: bool,
) -> Result<Vec<(Arc<EscapeState>, Role)>> {
    let mut roles = Vec::new();
    for info in &registry.allocs {
        match &info.origin {
            AllocOrigin::Node(node) if info.freed_by.is_none() && !auto_free_on_launch => roles
                .push((
                    EscapeState::new(ctx, &registry.label(*node as usize), info.ptr)?,
                    Role::Make,
                )),
            AllocOrigin::Escaped(state) => roles.push((
                state.clone(),
                if info.freed_by.is_some() {
                    Role::Free
                } else {
                    Role::Use
                },
            )),
            _ => {}
        }
    }
    Ok(roles)
}
