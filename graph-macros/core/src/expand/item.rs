//! The item form: a named graph type with `build`, `rebuild`, `instantiate`,
//! a typed exec with one accessor per kernel, copy and fill node, and the
//! graph's DOT text and labels as constants.

use super::asserts::{race_checks, read_only_checks};
use super::level::{internal, Emitter};
use super::param_types::{list_element, slice_element, with_lifetime};
use super::{Moved, Runtime};
use crate::check::Topology;
use crate::model::{Kind, Model, Op, Origin, TOP};
use crate::parse::Param;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Ident, Type};

pub fn expand(model: &Model<'_>, topology: &Topology, rt: &Runtime) -> TokenStream {
    let def = model.def;
    let Some(name) = &def.name else {
        return TokenStream::new();
    };
    let mut emitter = Emitter::new(model, topology, rt);
    emitter.body_handles = true;
    emitter.nodes_in_place = true;
    let names = Names::new(name);
    let (vis, docs) = (&def.vis, model.attrs.passthrough.iter());
    let (nodes_name, bound_name, exec_name) = (&names.nodes, &names.bound, &names.exec);

    let params: Vec<(Ident, Type)> = def
        .params
        .iter()
        .map(|p| (p.name.clone(), with_lifetime(&p.ty)))
        .collect();
    let param_names: Vec<&Ident> = params.iter().map(|(n, _)| n).collect();
    let build_params = params.iter().map(|(n, t)| quote!(#n: #t));
    let slices: Vec<(&Ident, Type)> = def
        .params
        .iter()
        .filter_map(|p| slice_element(&p.ty).map(|t| (&p.name, t)))
        .collect();
    // Lists of buffers (`&[CudaSlice<T>]`, `&mut [CudaSlice<T>]`): one
    // buffer per lane or layer, indexed in the graph (`xs[i]`).
    let lists: Vec<(&Ident, Type)> = def
        .params
        .iter()
        .filter_map(|p| list_element(&p.ty).map(|t| (&p.name, t)))
        .collect();
    let is_slice = |p: &Param| slices.iter().any(|(n, _)| **n == p.name);
    let is_list = |p: &Param| lists.iter().any(|(n, _)| **n == p.name);
    let rebuild_params = params.iter().zip(&def.params).map(|((n, t), p)| {
        match (slice_element(&p.ty), list_element(&p.ty)) {
            (Some(elem), _) => quote!(#n: #rt::Buf<'a, #elem>),
            (_, Some(elem)) => quote!(#n: &[#rt::Buf<'a, #elem>]),
            _ => quote!(#n: #t),
        }
    });
    let distinct = super::rebuild::distinct_buffers(model, &slices, &lists, rt);
    let generic_params = params.iter().zip(&def.params).map(|((n, t), p)| {
        match (slice_element(&p.ty), list_element(&p.ty)) {
            (Some(elem), _) => {
                quote!(#n: impl #rt::__private::Operand<'a, Out = #rt::Buf<'a, #elem>>)
            }
            (_, Some(elem)) => quote!(#n: impl #rt::__private::BufferList<'a, #elem>),
            _ => quote!(#n: #t),
        }
    });
    let graph_var = internal("__graph");
    // Mixed-site: a parameter of the graph may be called `ctx` too.
    let ctx = internal("ctx");
    let bind_slices = def
        .params
        .iter()
        .filter(|p| is_slice(p) || is_list(p))
        .map(|p| {
            let n = &p.name;
            match is_list(p) {
                true => {
                    quote! { let #n = #rt::__private::BufferList::into_bufs(#n, &mut #graph_var); }
                }
                false => {
                    quote! { let #n = #rt::__private::Operand::into_operand(#n, &mut #graph_var); }
                }
            }
        });

    // Host buffers: made first thing in the build (`let y = &HostBuf`, so
    // nodes pass them by reference), kept in the node table for the exec's
    // accessors and handed to the caller in the bound struct.
    let hosts = &model.host_buffers;
    let make_hosts = hosts.iter().map(|h| {
        let (name, ty) = (&h.name, &h.ty);
        let len = super::level::alloc_len(&h.len, rt);
        quote! { let #name = &#graph_var.add_host_buffer::<#ty>(#len)?; }
    });
    // Escaping allocations are handed to the caller through the bound struct.
    let escapes: Vec<(&Ident, &Type)> = model
        .nodes
        .iter()
        .filter(|n| n.attrs.escape.is_some())
        .filter_map(|n| match n.op {
            Op::Alloc { buffer, ty, .. } => Some((buffer, ty)),
            _ => None,
        })
        .collect();
    // Conditional handles of the graph's top level (once each, outside
    // repeated blocks): what a per-node update of a kernel that sets one
    // passes again (`exec.test().set_args((bound.again, ..))`).
    let handles: Vec<&Ident> = model
        .handles
        .iter()
        .filter(|h| h.is_top_level())
        .map(|h| &h.syntax.name)
        .collect();
    let bound_fields = slices
        .iter()
        .map(|(n, t)| quote!(pub #n: #rt::Buf<'a, #t>))
        .chain(
            lists
                .iter()
                .map(|(n, t)| quote!(pub #n: ::std::vec::Vec<#rt::Buf<'a, #t>>)),
        )
        .chain(
            escapes
                .iter()
                .map(|(n, t)| quote!(pub #n: #rt::Buf<'a, #t>)),
        )
        .chain(hosts.iter().map(|h| {
            let (n, t) = (&h.name, &h.ty);
            quote!(pub #n: #rt::HostBuf<#t>)
        }))
        .chain(handles.iter().map(|n| quote!(pub #n: #rt::CondHandle)));
    let bound_values = slices
        .iter()
        .map(|(n, _)| quote!(#n))
        .chain(lists.iter().map(|(n, _)| quote!(#n)))
        .chain(escapes.iter().map(|(n, _)| quote!(#n)))
        .chain(hosts.iter().map(|h| {
            let n = &h.name;
            quote!(#n: ::core::clone::Clone::clone(#n))
        }))
        .chain(handles.iter().map(|n| {
            let copy = super::level::bound_handle(n);
            quote!(#n: #copy)
        }));

    // Typed node handles: kernel, copy and fill nodes.
    let accessed: Vec<usize> = (0..model.nodes.len())
        .filter(|&id| emitter.has_accessor(id))
        .collect();
    let host_fields = hosts.iter().map(|h| {
        let (n, t) = (&h.name, &h.ty);
        quote!(#n: #rt::HostBuf<#t>)
    });
    let repeated_nodes = accessed.iter().any(|&id| !emitter.chains[id].is_empty());
    // Node tables of repeated nodes are vectors, and host buffers handles:
    // the table is cloned, not copied.
    let (nodes_derive, nodes_copy) = if repeated_nodes || !hosts.is_empty() {
        (quote!(#[derive(Debug, Clone)]), quote!(.clone()))
    } else {
        (quote!(#[derive(Debug, Clone, Copy)]), TokenStream::new())
    };
    let table = super::table::table(&emitter, &accessed, nodes_name, &nodes_derive, vis);
    let table_parts = Moved::from(table.parts);
    let node_fields = table.fields.into_iter().map(Moved::from);
    let unset_nodes = table.unset.into_iter().chain(hosts.iter().map(|h| {
        let n = &h.name;
        quote!(#n: ::core::clone::Clone::clone(#n))
    }));
    let unset_nodes = unset_nodes.map(Moved::from);
    let host_accessors = hosts.iter().map(|h| {
        let (n, t) = (&h.name, &h.ty);
        let doc = format!(
            "The host buffer `{n}`, to read or write between launches: waits for the last launch first ({}).",
            rt.doc_link("Exec::host_data")
        );
        quote! {
            #[doc = #doc]
            pub fn #n(&mut self) -> #rt::Result<&mut [#t]> {
                self.exec.host_data(&self.nodes.#n)
            }
        }
    });
    let body_accessed: Vec<usize> = accessed
        .iter()
        .copied()
        .filter(|&id| model.nodes[id].level != TOP && emitter.chains[id].is_empty())
        .collect();
    let slots = body_accessed.iter().map(|&id| {
        let slot = emitter.slot_var(id);
        quote! { let mut #slot = ::core::option::Option::None; }
    });
    let unslots = body_accessed.iter().map(|&id| {
        let (slot, field, label) = (
            emitter.slot_var(id),
            emitter.table_field(id),
            &model.nodes[id].name,
        );
        let nodes = internal("__nodes");
        quote! { #nodes.#field = #rt::__private::built(#slot, #label)?; }
    });
    let (slots, unslots) = (slots.map(Moved::from), unslots.map(Moved::from));
    let nodes_var = internal("__nodes");
    let loads = emitter.load_kernels(&graph_var);
    let level = Moved::from(emitter.level(TOP, &graph_var));
    let reserve = emitter.reserve_records(&graph_var);

    let accessors = accessed.iter().map(|&id| {
        let node = &model.nodes[id];
        let (label, field) = (&node.label, Moved::from(emitter.table_field(id)));
        let chain = &emitter.chains[id];
        let vars: Vec<&Ident> = chain.iter().map(|&r| &model.repeats[r].syntax.var).collect();
        let (doc, handle) = if chain.is_empty() {
            (
                format!("The `{}` node, to update it in this exec.", node.name),
                quote!(self.nodes.#field),
            )
        } else {
            let indices = vars.iter().map(|v| format!("[{v}]")).collect::<String>();
            let first = vars[0];
            let mut lookup = quote!(self.nodes.#field.get(#first));
            for var in &vars[1..] {
                lookup = quote!(#lookup.and_then(|table| table.get(#var)));
            }
            let name = &node.name;
            (
                format!("The `{name}{indices}` node (of the iteration{} given), to update it in this exec.\n\n# Panics\nIf there is no such iteration.", if vars.len() > 1 { "s" } else { "" }),
                quote!(#rt::__private::node_at(#lookup, #name, &[#(#vars),*])),
            )
        };
        let (handle, params) = (Moved::from(handle), vars.iter().map(|v| quote!(#v: usize)));
        // (Raw: a string literal escapes char by char, a raw one does not.)
        let doc = super::raw_str_literal(&doc);
        // A repeated node's accessor panics at an iteration that is not
        // there: the panic names the caller's line.
        let track_caller = (!chain.is_empty()).then(|| quote!(#[track_caller]));
        match node.op {
            // Its arguments name graph memory that `bound()` does not
            // hold (an alloc scope's buffer, an allocation that stays in
            // the graph): no `set_args` could pass them, so only
            // `set_enabled` is offered.
            Op::Kernel(_) if uses_unbound_memory(model, node) => quote! {
                #[doc = #doc]
                #track_caller
                pub fn #label(&mut self, #(#params),*) -> #rt::NodeMut<'_, 'a> {
                    #rt::NodeMut::new(&mut self.exec, #handle.node())
                }
            },
            Op::Kernel(k) => {
                let path = &k.function;
                quote! {
                    #[doc = #doc]
                    #track_caller
                    pub fn #label(&mut self, #(#params),*) -> #rt::KernelNodeMutOf<'_, 'a, #path> {
                        #rt::KernelNodeMut::new(&mut self.exec, #handle)
                    }
                }
            }
            _ => quote! {
                #[doc = #doc]
                #track_caller
                pub fn #label(&mut self, #(#params),*) -> #rt::NodeMut<'_, 'a> {
                    #rt::NodeMut::new(&mut self.exec, #handle)
                }
            },
        }
    });
    let accessors = accessors.map(Moved::from);
    let disabled = model
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.attrs.disabled.is_some())
        .map(|(id, n)| {
            let field = emitter.table_field(id);
            let depth = emitter.chains[id].len();
            let each = internal("__each");
            let mut node = if depth == 0 {
                quote!(self.nodes.#field)
            } else {
                quote!(*#each)
            };
            if n.kind() == Kind::Kernel {
                node = quote!(#node.node());
            }
            let mut set = quote! { self.exec.set_enabled(#node, false)?; };
            // One loop per repeated block, innermost first.
            for level in (0..depth).rev() {
                let over = match level {
                    0 => quote!(&self.nodes.#field),
                    _ => quote!(#each),
                };
                set = quote! { for #each in #over { #set } };
            }
            set
        });

    let synchronize_doc = rt.doc(
        "Waits for the last launch; a host node's panic in it is\nreturned here, naming the node ({link}).",
        "Exec::synchronize",
    );
    let bound_mut_doc = rt.doc(
        "A buffer the graph binds (a field of the graph's `bound()`), to read\nor write between launches ({link}).",
        "Exec::bound_mut",
    );
    let take_escaped_doc = rt.doc(
        "Takes an allocation the last launch made and the graph leaves\nlive (an `#[escape]` buffer of the graph's `bound()`), to read, hand\nto another graph, or drop ({link}).",
        "Exec::take_escaped",
    );
    let (labels, dot) = outline(model);
    let dot = super::raw_str_literal(&dot);
    let options = options(model, rt);
    let exec_doc =
        format!("An instantiated [`{name}`]: launch it, update it, and reach its nodes.");
    let bound_doc = match handles.is_empty() {
        true => format!(
            "The buffers [`{name}::build`] bound (and its escaping allocations and host buffers)."
        ),
        false => format!(
            "The buffers [`{name}::build`] bound (and its escaping allocations, host buffers \
             and top-level conditional handles, for per-node updates of the kernels that set \
             them)."
        ),
    };
    let read_only_checks = Moved::from(read_only_checks(model, rt));
    // A list of buffers is a vector: the bound buffers are cloned, not copied.
    let (bound_derive, bound_copy) = if lists.is_empty() && hosts.is_empty() {
        (quote!(#[derive(Debug, Clone, Copy)]), TokenStream::new())
    } else {
        (quote!(#[derive(Debug, Clone)]), quote!(.clone()))
    };
    let race_checks = Moved::from(race_checks(model, topology, rt));
    let super::owned::DeviceBuffers {
        reuse_param,
        reuse_none,
        reuse_self,
        make: make_devices,
        bound_fields: device_fields,
        bound_values: device_values,
        exec_field,
        exec_init,
        exec_update,
        accessors: device_accessors,
    } = super::owned::device_buffers(model, &graph_var, bound_name, &bound_copy, rt);
    quote! {
        #read_only_checks
        #race_checks
        #(#docs)*
        #[derive(Debug)]
        #vis struct #name<'a> {
            graph: #rt::Graph<'a>,
            nodes: #nodes_name,
            bound: #bound_name<'a>,
        }

        #table_parts

        #[doc(hidden)]
        #nodes_derive
        #vis struct #nodes_name {
            #(#node_fields,)*
            #(#host_fields,)*
        }

        #[doc = #bound_doc]
        #bound_derive
        #[allow(missing_docs)]
        #vis struct #bound_name<'a> {
            #(#bound_fields,)*
            #(#device_fields,)*
            #[doc(hidden)]
            pub __borrow: ::core::marker::PhantomData<&'a ()>,
        }

        #[doc = #exec_doc]
        #[derive(Debug)]
        #vis struct #exec_name<'a> {
            exec: #rt::Exec<'a>,
            nodes: #nodes_name,
            #exec_field
        }

        #[allow(missing_docs)]
        impl<'a> #name<'a> {
            /// The labels of the graph's nodes, in source order (a node of
            /// a repeated block once, however many iterations it has).
            pub const LABELS: &'static [&'static str] = &[#(#labels),*];
            /// The graph in Graphviz DOT.
            pub const DOT: &'static str = #dot;
            /// How `instantiate` instantiates it (from the graph's attributes).
            pub const OPTIONS: #rt::InstantiateOptions<'static> = #options;

            /// Builds the graph in `ctx`, binding the slices it uses.
            #[allow(clippy::too_many_arguments)]
            pub fn build(
                #ctx: &::std::sync::Arc<#rt::cudarc::driver::CudaContext>,
                #(#build_params),*
            ) -> #rt::Result<Self> {
                Self::__build(#rt::Graph::new(#ctx)?, #reuse_none #(#param_names),*)
            }

            /// Builds the same graph again with other arguments, over buffers
            /// already bound (see [`Self::bound`]); update an exec with it.
            #[allow(clippy::too_many_arguments)]
            pub fn rebuild(&self, #(#rebuild_params),*) -> #rt::Result<Self> {
                #distinct
                Self::__build(self.graph.new_sharing()?, #reuse_self #(#param_names),*)
            }

            #[allow(unused_variables, unused_mut, clippy::too_many_arguments)]
            fn __build(mut #graph_var: #rt::Graph<'a>, #reuse_param #(#generic_params),*) -> #rt::Result<Self> {
                #rt::__private::race_checked(&mut #graph_var);
                #reserve
                #(#bind_slices)*
                #(#slots)*
                #loads
                #(#make_hosts)*
                #(#make_devices)*
                let mut #nodes_var = #nodes_name { #(#unset_nodes,)* };
                #level
                #(#unslots)*
                let bound = #bound_name { #(#bound_values,)* #(#device_values,)* __borrow: ::core::marker::PhantomData };
                ::core::result::Result::Ok(Self {
                    graph: #graph_var,
                    nodes: #nodes_var,
                    bound,
                })
            }

            /// The buffers `build` bound, for `rebuild`, and escaping allocations.
            pub fn bound(&self) -> #bound_name<'a> {
                self.bound #bound_copy
            }

            pub fn graph(&self) -> &#rt::Graph<'a> {
                &self.graph
            }

            /// The graph, to add to it (user objects with `keep_alive`, say).
            pub fn graph_mut(&mut self) -> &mut #rt::Graph<'a> {
                &mut self.graph
            }

            pub fn into_graph(self) -> #rt::Graph<'a> {
                self.graph
            }

            /// Instantiates it with [`Self::OPTIONS`].
            pub fn instantiate(&self) -> #rt::Result<#exec_name<'a>> {
                self.instantiate_with(&Self::OPTIONS)
            }

            /// Instantiates it; nodes marked `#[disabled]` start disabled.
            pub fn instantiate_with(
                &self,
                options: &#rt::InstantiateOptions<'_>,
            ) -> #rt::Result<#exec_name<'a>> {
                let mut exec = #exec_name { exec: self.graph.instantiate_with(options)?, nodes: self.nodes #nodes_copy, #exec_init };
                exec.__start_disabled()?;
                ::core::result::Result::Ok(exec)
            }
        }

        impl<'a> #rt::__private::IntoChild<'a> for #name<'a> {
            fn into_child(self) -> #rt::Graph<'a> {
                self.graph
            }
        }

        #[allow(missing_docs)]
        impl<'a> #exec_name<'a> {
            /// Launches the exec on `stream`, which it keeps alive; dropping
            /// the exec waits for its last launch.
            pub fn launch(&mut self, stream: &::std::sync::Arc<#rt::cudarc::driver::CudaStream>) -> #rt::Result<()> {
                self.exec.launch(stream)
            }

            /// Launches the exec on a stream of its own (`Exec::launch_on_own_stream`).
            /// A graph-owned buffer read after it is copied on that stream, with no event.
            pub fn launch_on_own_stream(&mut self) -> #rt::Result<()> {
                self.exec.launch_on_own_stream()
            }

            pub fn upload(&mut self, stream: &#rt::cudarc::driver::CudaStream) -> #rt::Result<()> {
                self.exec.upload(stream)
            }

            /// Updates the exec from another build of this graph type; if the update is
            /// refused (another topology, as other repeat counts give, or a refusal of
            /// `Exec::update`), re-instantiates and says why.
            pub fn update(&mut self, graph: &#name<'a>) -> #rt::Result<#rt::UpdateOutcome> {
                let outcome = self.exec.update_or_reinstantiate(&graph.graph, &#name::OPTIONS)?;
                self.nodes = graph.nodes #nodes_copy;
                #exec_update
                if let #rt::UpdateOutcome::Reinstantiated { .. } = outcome {
                    self.__start_disabled()?;
                }
                ::core::result::Result::Ok(outcome)
            }

            #synchronize_doc
            pub fn synchronize(&mut self) -> #rt::Result<()> {
                self.exec.synchronize()
            }

            #bound_mut_doc
            pub fn bound_mut<T: 'static>(
                &mut self,
                buf: #rt::Buf<'a, T>,
            ) -> #rt::Result<#rt::BoundMut<'_, 'a, T>> {
                self.exec.bound_mut(buf)
            }

            #take_escaped_doc
            pub fn take_escaped<T>(
                &mut self,
                buf: #rt::Buf<'a, T>,
            ) -> #rt::Result<#rt::Escaped<T>> {
                self.exec.take_escaped(buf)
            }

            /// The untyped exec.
            pub fn exec(&mut self) -> &mut #rt::Exec<'a> {
                &mut self.exec
            }

            /// The handle a kernel uses to launch this exec (needs `#[device_launch]`).
            pub fn device_handle(&self) -> #rt::Result<#rt::DeviceExec<'_>> {
                self.exec.device_handle()
            }

            #(#accessors)*
            #(#host_accessors)*
            #(#device_accessors)*

            fn __start_disabled(&mut self) -> #rt::Result<()> {
                #(#disabled)*
                ::core::result::Result::Ok(())
            }
        }
    }
}

/// Generated type names for graph `name`.
pub(super) struct Names {
    pub(super) nodes: Ident,
    pub(super) bound: Ident,
    pub(super) exec: Ident,
}

impl Names {
    pub(super) fn new(name: &Ident) -> Self {
        Names {
            nodes: format_ident!("__{}Nodes", name),
            bound: format_ident!("{}Bound", name),
            exec: format_ident!("{}Exec", name),
        }
    }
}

/// Labels and DOT text.
pub fn outline(model: &Model<'_>) -> (Vec<String>, String) {
    let labels = model
        .nodes
        .iter()
        .filter(|n| matches!(n.origin, Origin::Stmt(_)))
        .map(|n| n.name.clone())
        .collect();
    (labels, crate::dot::render(model))
}

fn options(model: &Model<'_>, rt: &Runtime) -> TokenStream {
    let (auto_free, device, priority) = (
        model.attrs.auto_free_on_launch.is_some(),
        model.attrs.device_launch.is_some(),
        model.attrs.use_node_priority.is_some(),
    );
    quote! {
        #rt::InstantiateOptions::new()
            .auto_free_on_launch(#auto_free)
            .device_launch(#device)
            .use_node_priority(#priority)
    }
}

/// Whether `node`'s operands name a graph allocation that `bound()` does
/// not hold: one of an alloc scope, or one that is not `#[escape]`.
fn uses_unbound_memory(model: &Model<'_>, node: &crate::model::Node<'_>) -> bool {
    node.uses.iter().any(|ident| {
        !node.bound.contains(ident)
            && model
                .buffer_named(&ident.to_string())
                .is_some_and(|b| !model.buffers[b].escape)
    })
}
