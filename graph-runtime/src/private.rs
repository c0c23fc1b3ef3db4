//! Support for the code `cuda_graph!` generates. Not a stable API.

use crate::buffer::Buf;
use crate::error::{GraphError, Result, Unsupported};
use crate::graph::Graph;
use cudarc::driver::{CudaContext, CudaSlice};
use std::sync::Arc;

pub use crate::kernel::{ArgOf, ArgsOf, KernelDef};

/// The node table's type of a kernel node of `K`, named
/// `<K as KernelNodeType>::Node`: written as a generic argument
/// (`KernelNode<<K as KernelDef>::Args>`), a misspelled kernel was
/// reported a second time, with rustc's hint to make it a type parameter.
pub trait KernelNodeType {
    type Node;
}

impl<K: KernelDef> KernelNodeType for K {
    type Node = crate::KernelNode<K::Args>;
}
pub use crate::repeat::{
    last, node_at, reserve, Count as RepeatCount, Deps, Label, NodeLabel, NodeList,
};

/// A fill node's value, checked where it is written (see `FillValue`).
#[inline(always)]
pub fn fill_value<T: crate::memory::FillValue>(value: T) -> T {
    value
}

/// Whether a struct parameter's field `declared` (as `stringify!` spells
/// it: a raw field is `r#dst`) is the field `name` of a graph's struct
/// literal (the DSL makes raw names plain: `dst`), in a const context.
pub const fn field_is(name: &str, declared: &str) -> bool {
    let (a, mut b) = (name.as_bytes(), declared.as_bytes());
    if let [b'r', b'#', rest @ ..] = b {
        b = rest;
    }
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether kernel `K` writes the buffer of its parameter `I` (for the
/// compile-time check of read-only bindings).
pub const fn param_writes<K: KernelDef, const I: usize>() -> bool
where
    K::Args: crate::kernel::ParamAt<I>,
{
    <<K::Args as crate::kernel::ParamAt<I>>::Param as crate::kernel::KernelParam>::WRITES
}

/// A boolean as a type, for the compile-time checks of kernel arguments
/// (`Bool<{ param_writes::<K, I>() }>`).
#[derive(Debug)]
pub struct Bool<const B: bool>;

/// How a parameter accesses its buffer, from [`param_writes`] as a type.
pub trait ParameterAccess {
    type Kind;
}

impl ParameterAccess for Bool<true> {
    type Kind = crate::kernel::WritingParameter;
}

impl ParameterAccess for Bool<false> {
    type Kind = crate::kernel::ReadingParameter;
}

/// [`ParameterAccess::Kind`] of `Bool<WRITES>`: the race and read-only
/// checks' subject, in a few tokens.
pub type Access<const WRITES: bool> = <Bool<WRITES> as ParameterAccess>::Kind;

/// The device-memory handle, for operand type checks.
pub type DeviceBuf<'a, T> = Buf<'a, T>;

pub use crate::graph::Operand;

/// What a `graph EXPR` node accepts: a `Graph` or a generated graph type.
pub trait IntoChild<'a> {
    fn into_child(self) -> Graph<'a>;
}

impl<'a> IntoChild<'a> for Graph<'a> {
    fn into_child(self) -> Graph<'a> {
        self
    }
}

/// Builds the graph of a graph expression.
pub fn build_graph<'a>(
    ctx: &Arc<CudaContext>,
    body: impl FnOnce(&mut Graph<'a>) -> Result<()>,
) -> Result<Graph<'a>> {
    let mut graph = Graph::new(ctx)?;
    race_checked(&mut graph);
    body(&mut graph)?;
    Ok(graph)
}

/// Marks a graph the macro builds: its race check then holds for per-node
/// updates too (see `graph::built_uses`).
pub fn race_checked(graph: &mut Graph<'_>) {
    graph.mark_race_checked();
}

/// Refuses `rebuild` arguments that void the macro's race check, which
/// took distinct parameters for distinct buffers: a buffer a parameter
/// writes may not overlap any other parameter's. Each entry: the
/// parameter's name and, for a list, the element's index; its device
/// bytes; whether the graph may write it.
///
/// # Errors
/// [`GraphError::Unsupported`] ([`Unsupported::OverlappingRebuildBuffers`])
/// naming the two parameters.
pub fn distinct_buffers(mut buffers: Vec<RebuildBuffer>) -> Result<()> {
    buffers.retain(|(_, bytes, _)| bytes.0 < bytes.1);
    buffers.sort_unstable_by_key(|(_, bytes, _)| bytes.0);
    let name = |(param, index): (&str, Option<usize>)| match index {
        Some(i) => format!("{param}[{i}]"),
        None => param.to_string(),
    };
    // The furthest end so far of any buffer, and of a written one, with
    // the buffer reaching it.
    let mut any: Option<(u64, usize)> = None;
    let mut written: Option<(u64, usize)> = None;
    for i in 0..buffers.len() {
        let (start, end, writes) = (buffers[i].1 .0, buffers[i].1 .1, buffers[i].2);
        let clash = match (written, any) {
            (Some((reach, j)), _) if start < reach => Some(j),
            (_, Some((reach, j))) if writes && start < reach => Some(j),
            _ => None,
        };
        if let Some(j) = clash {
            return Err(GraphError::unsupported(
                "rebuild",
                None,
                Unsupported::OverlappingRebuildBuffers {
                    first: name(buffers[j].0),
                    second: name(buffers[i].0),
                },
            ));
        }
        if any.is_none_or(|(reach, _)| end > reach) {
            any = Some((end, i));
        }
        if writes && written.is_none_or(|(reach, _)| end > reach) {
            written = Some((end, i));
        }
    }
    Ok(())
}

/// A `rebuild` argument for [`distinct_buffers`]: (parameter, list
/// index), device bytes, written.
pub type RebuildBuffer = ((&'static str, Option<usize>), (u64, u64), bool);

/// A buffer's device bytes, for [`distinct_buffers`].
pub fn buffer_bytes<T>(buffer: &crate::Buf<'_, T>) -> (u64, u64) {
    buffer.as_use(false).bytes
}

/// `<<<grid, block>>>` written as two integer literals that fit a `u32`,
/// unsuffixed or `u32` (most kernel nodes): the launch configuration in
/// fewer tokens than
/// `LaunchConfig::new(LaunchDim::dim(..), LaunchDim::dim(..))`, which other
/// dimensions take so that a type error points at them.
#[inline]
pub fn launch(grid: u32, block: u32) -> crate::LaunchConfig {
    crate::LaunchConfig::new(grid, block)
}

/// Gives a capture node's closure its parameter type (for inference).
pub fn capture_work<'a, F>(work: F) -> F
where
    F: FnOnce(&crate::capture::Capture<'_, 'a>) -> Result<()>,
{
    work
}

/// Returns the failure a generated builder kept (see
/// [`Graph::__add_kernel`]): called before every node that is not a kernel
/// node and at the end of each level, so that a build stops at its first
/// failure and returns it.
#[inline]
pub fn settle(failure: &mut Option<GraphError>) -> Result<()> {
    // A test of the tag, not a `take` per node (which moves the whole
    // error out and back).
    match failure {
        None => Ok(()),
        Some(_) => settle_failed(failure),
    }
}

#[cold]
#[inline(never)]
fn settle_failed(failure: &mut Option<GraphError>) -> Result<()> {
    failure.take().map_or(Ok(()), Err)
}

/// Node handles of no graph, which generated builders fill their node table
/// with (`Unset::unset()`, typed by the field) before building into it in
/// place (a table of thousands of handles moved at the end is, like an error
/// path per node, what makes LLVM slow).
pub trait Unset {
    fn unset() -> Self;
}

impl Unset for crate::node::Node {
    fn unset() -> Self {
        crate::node::Node::UNSET
    }
}

impl<A> Unset for crate::node::KernelNode<A> {
    fn unset() -> Self {
        crate::node::KernelNode::UNSET
    }
}

/// Runs one chunk of a long generated builder: a closure of its own, so
/// that rustc checks and optimizes it apart from the other chunks.
#[inline(always)]
pub fn chunk<T>(build: impl FnOnce() -> Result<T>) -> Result<T> {
    build()
}

/// A repeated node's table starts empty; each iteration adds to it.
impl<T> Unset for Vec<T> {
    fn unset() -> Self {
        Vec::new()
    }
}

/// A node handle set inside a conditional body's closure.
pub fn built<N>(node: Option<N>, label: &str) -> Result<N> {
    node.ok_or_else(|| GraphError::unsupported("build", Some(label), Unsupported::BodyNotBuilt))
}

/// What an invalid `cuda_graph!` expression evaluates to (never reached:
/// the crate does not compile).
pub fn invalid_graph<'a>() -> Result<Graph<'a>> {
    unreachable!("cuda_graph! reported errors")
}

/// A parameter of type `&[CudaSlice<T>]` or `&mut [CudaSlice<T>]` (a list
/// of buffers, indexed in the graph: `xs[i]`): each bound to the graph,
/// for reading or for writing. `rebuild` takes the bound buffers again.
pub trait BufferList<'a, T> {
    fn into_bufs(self, graph: &mut Graph<'a>) -> Vec<Buf<'a, T>>;
}

impl<'a, T> BufferList<'a, T> for &'a [CudaSlice<T>] {
    fn into_bufs(self, graph: &mut Graph<'a>) -> Vec<Buf<'a, T>> {
        self.iter().map(|slice| graph.bind(slice)).collect()
    }
}

impl<'a, T: 'static> BufferList<'a, T> for &'a mut [CudaSlice<T>] {
    fn into_bufs(self, graph: &mut Graph<'a>) -> Vec<Buf<'a, T>> {
        self.iter_mut().map(|slice| graph.bind_mut(slice)).collect()
    }
}

impl<'a, T> BufferList<'a, T> for &[Buf<'a, T>] {
    fn into_bufs(self, _graph: &mut Graph<'a>) -> Vec<Buf<'a, T>> {
        self.to_vec()
    }
}

/// What a node accessor of a graph with errors returns: every method a
/// node accessor's result has, none reached (the crate does not compile),
/// so that uses of the accessor add no errors of their own.
#[derive(Debug)]
pub struct Unchecked;

#[allow(clippy::unused_self)]
impl Unchecked {
    pub fn set_args<T>(&mut self, _args: T) -> Result<()> {
        unreachable!("cuda_graph! reported errors")
    }

    pub fn set_enabled(&mut self, _enabled: bool) -> Result<()> {
        unreachable!("cuda_graph! reported errors")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(buffers: Vec<RebuildBuffer>) -> Option<String> {
        distinct_buffers(buffers).err().map(|e| e.to_string())
    }

    #[test]
    fn rebuild_buffers_may_share_only_what_no_parameter_writes() {
        let x = |bytes, writes| (("x", None), bytes, writes);
        let y = |bytes, writes| (("y", None), bytes, writes);
        assert_eq!(refused(vec![x((0, 64), true), y((64, 128), true)]), None);
        assert_eq!(
            refused(vec![x((0, 64), false), y((0, 64), false)]),
            None,
            "two reads"
        );
        assert_eq!(
            refused(vec![x((0, 64), true), y((8, 8), true)]),
            None,
            "an empty buffer"
        );
        let message = refused(vec![y((32, 96), false), x((0, 64), true)]).unwrap();
        assert!(message.contains("`x` and `y` overlap"), "{message}");
        // A list's elements, one written inside a long read.
        let list = |i, bytes| (("xs", Some(i)), bytes, true);
        let message = refused(vec![
            (("big", None), (0, 1000), false),
            list(0, (1000, 1100)),
            list(1, (500, 600)),
        ])
        .unwrap();
        assert!(message.contains("`big` and `xs[1]` overlap"), "{message}");
    }
}
