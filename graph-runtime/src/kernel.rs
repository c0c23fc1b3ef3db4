//! Typed kernel declarations. A declaration names a kernel in CUDA C, PTX or
//! cubin and states its parameter types; kernel nodes take arguments of those
//! types, so rustc checks every argument. CUDA C is compiled by NVRTC for the
//! current device on first use and cached once per context per process.

use crate::buffer::{Buf, BufferUse};
use crate::conditional::CondHandle;
use crate::error::{DriverResultExt, GraphError, Result};
use crate::exec::{DeviceExec, DeviceTarget};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

/// Where a kernel's code comes from.
#[derive(Debug, Clone, Copy)]
enum Source {
    CudaC(&'static str),
    Ptx(&'static str),
    Cubin(&'static [u8]),
}

/// A kernel declared with its parameter types `A` (a tuple of
/// [`KernelParam`]s), to be loaded per context with [`KernelDecl::load`].
///
/// ```
/// use graph_runtime::kernel::{KernelDecl, In, Len, Out};
/// const SOURCE: &str = r#"extern "C" __global__ void add(const float* a, float* b, unsigned n) {
///     unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
///     if (i < n) b[i] += a[i];
/// }"#;
/// // SAFETY: `add` takes (const float*, float*, unsigned) and touches only
/// // the first n elements of each buffer; n is a `Len`, which the runtime
/// // checks against both buffers' lengths.
/// pub static ADD: KernelDecl<(In<f32>, Out<f32>, Len)> = unsafe { KernelDecl::cuda_c(SOURCE, "add") };
/// ```
#[derive(Debug)]
pub struct KernelDecl<A> {
    source: Source,
    name: &'static str,
    pdl_aware: bool,
    _args: PhantomData<fn(A)>,
}

impl<A: KernelArgs> KernelDecl<A> {
    /// A kernel in CUDA C source, compiled by NVRTC on first use.
    ///
    /// # Safety
    /// The kernel named `name` in `source` must take parameters matching `A`
    /// in order and layout, and access only memory it is given, in bounds.
    pub const unsafe fn cuda_c(source: &'static str, name: &'static str) -> Self {
        KernelDecl {
            source: Source::CudaC(source),
            name,
            pdl_aware: false,
            _args: PhantomData,
        }
    }

    /// A kernel in PTX text.
    ///
    /// # Safety
    /// As for [`KernelDecl::cuda_c`].
    pub const unsafe fn ptx(ptx: &'static str, name: &'static str) -> Self {
        KernelDecl {
            source: Source::Ptx(ptx),
            name,
            pdl_aware: false,
            _args: PhantomData,
        }
    }

    /// A kernel in a cubin (or fatbin) image.
    ///
    /// # Safety
    /// As for [`KernelDecl::cuda_c`].
    pub const unsafe fn cubin(image: &'static [u8], name: &'static str) -> Self {
        KernelDecl {
            source: Source::Cubin(image),
            name,
            pdl_aware: false,
            _args: PhantomData,
        }
    }

    /// Declares the kernel PDL-aware: it may follow a programmatic dependent
    /// launch edge (`-(programmatic)->`, `-(launch_order)->`), which lets it
    /// start before its predecessor has finished.
    ///
    /// # Safety
    /// Every thread of the kernel executes `griddepcontrol.wait` (`pdl_wait()`
    /// of the `kernels` crate's PDL prelude) before it reads or writes any
    /// memory that a node before it touches. That wait returns once every
    /// predecessor grid has completed and its writes are visible.
    pub const unsafe fn pdl_aware(mut self) -> Self {
        self.pdl_aware = true;
        self
    }

    /// The kernel's name in its module.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Whether the declaration states that the kernel waits on its
    /// predecessors ([`KernelDecl::pdl_aware`]).
    pub fn is_pdl_aware(&self) -> bool {
        self.pdl_aware
    }

    /// Loads the kernel into `ctx`, compiling and loading its module on the
    /// first call for this context (later calls reuse the cached module).
    pub fn load(&self, ctx: &Arc<CudaContext>) -> Result<Kernel<A>> {
        let module = cached_module(self.source, self.name, ctx)?;
        let function = module
            .load_function(self.name)
            .op_at("cuModuleGetFunction", self.name)?;
        Ok(Kernel {
            function,
            name: self.name.into(),
            pdl_aware: self.pdl_aware,
            _args: PhantomData,
        })
    }
}

/// A kernel declared as a type, so that its parameter types can be named
/// (`<K as KernelDef>::Args`): what `cuda_graph!`'s `kernel PATH` expects.
/// Declare one with [`declare_kernel!`](crate::declare_kernel).
pub trait KernelDef {
    /// The kernel's parameter types, a tuple of [`KernelParam`]s.
    type Args: KernelArgs;
    /// Where its code comes from.
    const DECL: KernelDecl<Self::Args>;

    /// Loads it into `ctx` (compiled and loaded once per context).
    fn load(ctx: &Arc<CudaContext>) -> Result<Kernel<Self::Args>> {
        Self::DECL.load(ctx)
    }
}

/// Declares kernels as types implementing [`KernelDef`], one statement each.
/// The `unsafe` is the author's promise that the parameter tuple matches the
/// kernel's signature and that the kernel stays within the memory it is
/// given, within bounds a safe caller cannot move: counts and indices it
/// trusts are declared [`Len`] and [`Index`] (checked against the buffers by
/// the runtime), fixed-size and per-block buffers [`InFirst`], [`OutFirst`]
/// and [`OutPerBlock`]; anything else the kernel checks itself. A plain
/// `u32` count that the kernel trusts would let safe code write out of
/// bounds. Write the promise in a `// SAFETY:` comment.
///
/// ```
/// use graph_runtime::kernel::{In, Len, Out};
/// const SOURCE: &str = r#"extern "C" __global__ void twice(const float* x, float* y, unsigned n) {
///     unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2.0f * x[i]; }"#;
/// graph_runtime::declare_kernel! {
///     /// `y = 2x`.
///     // SAFETY: matches `twice(const float*, float*, unsigned)`; touches x[..n], y[..n].
///     pub Twice: (In<f32>, Out<f32>, Len) = unsafe cuda_c(SOURCE, "twice");
/// }
/// ```
///
/// A kernel that may follow a programmatic dependent launch edge says so
/// with `unsafe pdl_aware`: its promise adds that every thread waits on its
/// predecessors (`griddepcontrol.wait`) before touching their memory. This
/// implements [`PdlAware`] and marks the [`KernelDecl`]:
///
/// ```
/// use graph_runtime::kernel::{Len, Out};
/// const SOURCE: &str = r#"extern "C" __global__ void bump(float* x, unsigned n) {
///     asm volatile("griddepcontrol.wait;" ::: "memory");
///     unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }"#;
/// graph_runtime::declare_kernel! {
///     // SAFETY: matches `bump(float*, unsigned)`; touches x[..n], and only
///     // after every thread has waited on its predecessors.
///     pub Bump: (Out<f32>, Len) = unsafe pdl_aware cuda_c(SOURCE, "bump");
/// }
/// fn needs_pdl_aware<K: graph_runtime::kernel::PdlAware>() {}
/// needs_pdl_aware::<Bump>();
/// ```
#[macro_export]
macro_rules! declare_kernel {
    () => {};
    (@one [$(#[$meta:meta])*] $vis:vis $name:ident: $args:ty = $decl:expr) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy)]
        $vis struct $name;
        impl $crate::kernel::KernelDef for $name {
            type Args = $args;
            const DECL: $crate::kernel::KernelDecl<$args> = $decl;

            fn load(
                ctx: &::std::sync::Arc<$crate::cudarc::driver::CudaContext>,
            ) -> $crate::Result<$crate::kernel::Kernel<$args>> {
                static LOADED: $crate::kernel::LoadedKernels<$args> = $crate::kernel::LoadedKernels::new();
                LOADED.get_or_load(ctx, &Self::DECL)
            }
        }
    };
    ($(#[$meta:meta])* $vis:vis $name:ident: $args:ty = unsafe pdl_aware $source:ident($($arg:expr),* $(,)?); $($rest:tt)*) => {
        $crate::declare_kernel!(@one [$(#[$meta])*] $vis $name: $args =
            // SAFETY: promised by the `unsafe` at the declaration.
            unsafe { $crate::kernel::KernelDecl::$source($($arg),*).pdl_aware() });
        // SAFETY: the declaration's `unsafe pdl_aware` states that the
        // kernel waits on its predecessors.
        unsafe impl $crate::kernel::PdlAware for $name {}
        $crate::declare_kernel!($($rest)*);
    };
    ($(#[$meta:meta])* $vis:vis $name:ident: $args:ty = unsafe $source:ident($($arg:expr),* $(,)?); $($rest:tt)*) => {
        $crate::declare_kernel!(@one [$(#[$meta])*] $vis $name: $args =
            // SAFETY: promised by the `unsafe` at the declaration.
            unsafe { $crate::kernel::KernelDecl::$source($($arg),*) });
        $crate::declare_kernel!($($rest)*);
    };
}

/// A kernel declared PDL-aware (`unsafe pdl_aware cuda_c(..)` in
/// [`declare_kernel!`](crate::declare_kernel)): it may follow a programmatic
/// dependent launch edge. `cuda_graph!` requires it of the kernel after
/// every `-(programmatic)->` and `-(launch_order)->` edge.
#[diagnostic::on_unimplemented(
    message = "kernel `{Self}` is not declared PDL-aware, so it cannot follow a programmatic dependent launch edge",
    label = "this edge lets `{Self}` start before its predecessor finishes",
    note = "once every thread of the kernel calls `pdl_wait()` before touching its predecessors' memory, declare it with `unsafe pdl_aware cuda_c(..)` in `declare_kernel!`",
    note = "or use `->` for an ordinary dependency"
)]
///
/// # Safety
/// As for [`KernelDecl::pdl_aware`]: every thread of the kernel waits on its
/// predecessors before touching their memory. `cuda_graph!` trusts this
/// trait at compile time (the runtime checks the declaration again).
pub unsafe trait PdlAware: KernelDef {}

/// The kernels a declaration has loaded, one per context: a graph build
/// finds its kernel with one short lock instead of a module lookup.
/// Used by the `kernel!` macro's expansion; not part of the API.
#[doc(hidden)]
#[derive(Debug)]
pub struct LoadedKernels<A> {
    loaded: Mutex<Vec<(usize, Kernel<A>)>>,
}

impl<A: KernelArgs> LoadedKernels<A> {
    pub const fn new() -> Self {
        LoadedKernels {
            loaded: Mutex::new(Vec::new()),
        }
    }

    /// The kernel for `ctx`, loading it on first use.
    pub fn get_or_load(&self, ctx: &Arc<CudaContext>, decl: &KernelDecl<A>) -> Result<Kernel<A>> {
        let key = ctx.cu_ctx() as usize;
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, kernel)) = loaded.iter().find(|(k, _)| *k == key) {
            return Ok(kernel.clone());
        }
        let kernel = decl.load(ctx)?;
        loaded.push((key, kernel.clone()));
        Ok(kernel)
    }
}

impl<A: KernelArgs> Default for LoadedKernels<A> {
    fn default() -> Self {
        Self::new()
    }
}

/// The `I`th parameter type of a parameter tuple: how `cuda_graph!` checks
/// each kernel argument on its own, with the error at that argument.
#[diagnostic::on_unimplemented(
    message = "this kernel takes fewer arguments: `{Self}` has no parameter {I}",
    label = "one argument too many"
)]
pub trait ParamAt<const I: usize> {
    type Param: KernelParam;
}

/// The value type of parameter `I` of kernel `K`.
pub type ArgOf<'a, K, const I: usize> =
    <<<K as KernelDef>::Args as ParamAt<I>>::Param as KernelParam>::Arg<'a>;

/// The tuple of values a node of kernel `K` takes.
pub type ArgsOf<'a, K> = <<K as KernelDef>::Args as KernelArgs>::Args<'a>;

/// A loaded kernel with parameter types `A`. Holding it keeps its module
/// loaded; graphs keep the kernels of their nodes.
#[derive(Debug)]
pub struct Kernel<A> {
    function: CudaFunction,
    name: Arc<str>,
    pdl_aware: bool,
    _args: PhantomData<fn(A)>,
}

impl<A> Clone for Kernel<A> {
    fn clone(&self) -> Self {
        Kernel {
            function: self.function.clone(),
            name: self.name.clone(),
            pdl_aware: self.pdl_aware,
            _args: PhantomData,
        }
    }
}

impl<A: KernelArgs> Kernel<A> {
    /// Wraps a function loaded with cudarc.
    ///
    /// # Safety
    /// As for [`KernelDecl::cuda_c`]: `function` must take parameters
    /// matching `A` and stay within the memory it is given. (Graphs keep the
    /// function's module loaded while they or their execs hold its nodes;
    /// an exec updated from another graph keeps its original graph's
    /// modules, not those of graphs it was updated from in between.)
    pub unsafe fn from_function(function: CudaFunction, name: &str) -> Self {
        Kernel {
            function,
            name: name.into(),
            pdl_aware: false,
            _args: PhantomData,
        }
    }

    /// Marks the kernel PDL-aware, as [`KernelDecl::pdl_aware`] does.
    ///
    /// # Safety
    /// As for [`KernelDecl::pdl_aware`].
    pub unsafe fn assume_pdl_aware(mut self) -> Self {
        self.pdl_aware = true;
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the kernel may follow a programmatic dependent launch edge.
    pub fn is_pdl_aware(&self) -> bool {
        self.pdl_aware
    }

    /// The cudarc function, e.g. to launch it on a stream being captured.
    pub fn function(&self) -> &CudaFunction {
        &self.function
    }
}

/// Grid or block dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Self {
        Dim3 { x, y: 1, z: 1 }
    }
}
impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Self {
        Dim3 { x, y, z: 1 }
    }
}
impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Self {
        Dim3 { x, y, z }
    }
}

/// How a kernel node is launched: `<<<grid, block, shared_mem>>>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: Dim3,
    pub block: Dim3,
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> Self {
        LaunchConfig {
            grid: grid.into(),
            block: block.into(),
            shared_mem_bytes: 0,
        }
    }

    pub fn with_shared_mem(mut self, bytes: u32) -> Self {
        self.shared_mem_bytes = bytes;
        self
    }

    /// One thread per element, `block` threads per block.
    pub fn for_elements(n: u32, block: u32) -> Self {
        LaunchConfig::new(n.div_ceil(block.max(1)).max(1), block)
    }

    /// Rejects what the driver would reject, with a clear message.
    #[inline]
    pub(crate) fn validate(&self) -> std::result::Result<(), String> {
        let (g, b) = (self.grid, self.block);
        let threads = u64::from(b.x) * u64::from(b.y) * u64::from(b.z);
        if g.x != 0 && g.y != 0 && g.z != 0 && threads != 0 && threads <= 1024 {
            return Ok(());
        }
        self.invalid_reason()
    }

    /// Why `validate` refused the configuration (kept off the hot path).
    #[cold]
    fn invalid_reason(&self) -> std::result::Result<(), String> {
        let (g, b) = (self.grid, self.block);
        if g.x == 0 || g.y == 0 || g.z == 0 {
            return Err(format!("grid {}x{}x{} has a zero dimension", g.x, g.y, g.z));
        }
        if b.x == 0 || b.y == 0 || b.z == 0 {
            return Err(format!(
                "block {}x{}x{} has a zero dimension",
                b.x, b.y, b.z
            ));
        }
        let threads = u64::from(b.x) * u64::from(b.y) * u64::from(b.z);
        if threads > 1024 {
            return Err(format!("block of {threads} threads exceeds CUDA's 1024"));
        }
        Ok(())
    }
}

/// Most parameters a kernel declaration has (tuples up to 12).
pub(crate) const MAX_PARAMS: usize = 12;

/// 8-byte words of argument values a kernel node holds: 256 bytes, room
/// for twelve by-value structs of a few fields each.
pub(crate) const VALUE_WORDS: usize = 32;

/// Collects a kernel's argument values and the buffers it touches, without
/// allocating: each parameter's bytes start at an 8-byte word of `words`
/// (scalars, addresses and handles take one; a [`Val`] struct as many as
/// it needs).
pub struct ArgEncoder<'a> {
    words: [u64; VALUE_WORDS],
    /// Words used so far.
    used: usize,
    /// Where each parameter starts in `words`.
    starts: [u8; MAX_PARAMS],
    len: usize,
    /// Set when the values did not fit (more than `VALUE_WORDS` words).
    overflow: bool,
    /// The buffers the arguments touch: at most one per parameter; the
    /// first `use_count` are written (left uninitialised past that, as one
    /// is made per kernel node added).
    use_slots: [std::mem::MaybeUninit<BufferUse>; MAX_PARAMS],
    use_count: usize,
    /// The conditional handles the kernel may set, like `use_slots`.
    cond_slots: [std::mem::MaybeUninit<CondHandle>; MAX_PARAMS],
    cond_count: usize,
    /// Execs the kernel may launch from the device, which the graph keeps
    /// (and tracks at every launch). Empty, so unallocated, for most nodes.
    execs: Vec<DeviceTarget<'a>>,
    /// The bounds the arguments must keep (see [`Len`]).
    bounds: Bounds,
}

/// What the kernel's length-like arguments claim, against the buffers they
/// bound; each as (value, parameter index).
#[derive(Debug, Clone, Copy)]
struct Bounds {
    /// The shortest [`In`]/[`Out`] buffer.
    shortest: (u64, usize),
    /// The largest [`Len`] argument.
    count: (u64, usize),
    /// One past the largest [`Index`] argument.
    index_end: (u64, usize),
    /// The shortest [`OutPerBlock`] buffer.
    per_block: (u64, usize),
}

/// Keeps the smaller of `bound` and (`value`, `index`).
fn lower(bound: &mut (u64, usize), value: u64, index: usize) {
    if value < bound.0 {
        *bound = (value, index);
    }
}

/// Keeps the larger of `bound` and (`value`, `index`).
fn raise(bound: &mut (u64, usize), value: u64, index: usize) {
    if value > bound.0 {
        *bound = (value, index);
    }
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            shortest: (u64::MAX, 0),
            count: (0, 0),
            index_end: (0, 0),
            per_block: (u64::MAX, 0),
        }
    }
}

impl std::fmt::Debug for ArgEncoder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgEncoder")
            .field("words", &&self.words[..self.used])
            .field("params", &self.len)
            .field("buffers", &self.use_count)
            .field("conds", &self.cond_count)
            .field("execs", &self.execs.len())
            .finish()
    }
}

impl Default for ArgEncoder<'_> {
    fn default() -> Self {
        ArgEncoder {
            words: [0; VALUE_WORDS],
            used: 0,
            starts: [0; MAX_PARAMS],
            len: 0,
            overflow: false,
            use_slots: [std::mem::MaybeUninit::uninit(); MAX_PARAMS],
            use_count: 0,
            cond_slots: [std::mem::MaybeUninit::uninit(); MAX_PARAMS],
            cond_count: 0,
            execs: Vec::new(),
            bounds: Bounds::default(),
        }
    }
}

impl<'a> ArgEncoder<'a> {
    fn push_bytes(&mut self, bytes: &[u8]) {
        let needed = bytes.len().div_ceil(8).max(1);
        if self.len >= MAX_PARAMS || self.used + needed > VALUE_WORDS {
            self.overflow = true;
            return;
        }
        let start = self.used;
        let target: &mut [u8] = bytemuck::cast_slice_mut(&mut self.words[start..start + needed]);
        target[..bytes.len()].copy_from_slice(bytes);
        target[bytes.len()..].fill(0);
        self.starts[self.len] = start as u8;
        self.used += needed;
        self.len += 1;
    }

    /// The encoded values and where each parameter starts in them, for
    /// `kernelParams` to point into.
    pub(crate) fn values(&self) -> (&[u64; VALUE_WORDS], &[u8]) {
        (&self.words, &self.starts[..self.len])
    }

    fn push_use(&mut self, used: BufferUse) {
        if let Some(slot) = self.use_slots.get_mut(self.use_count) {
            slot.write(used);
            self.use_count += 1;
        }
    }

    fn push_cond(&mut self, handle: CondHandle) {
        if let Some(slot) = self.cond_slots.get_mut(self.cond_count) {
            slot.write(handle);
            self.cond_count += 1;
        }
    }

    fn push_exec(&mut self, target: DeviceTarget<'a>) {
        self.execs.push(target);
    }

    /// Checks the arguments' bounds for a launch with `config`: every
    /// [`Len`] and [`Index`] argument within every [`In`]/[`Out`] buffer,
    /// and an [`OutPerBlock`] buffer for every block.
    pub(crate) fn check_bounds(&self, config: &LaunchConfig) -> std::result::Result<(), String> {
        if self.overflow {
            return Err(format!(
                "the kernel's arguments take more than the {} bytes a node holds",
                VALUE_WORDS * 8
            ));
        }
        let b = &self.bounds;
        let (shortest, buffer) = b.shortest;
        if b.count.0 > shortest {
            return Err(format!(
                "length argument {} is {} but buffer argument {buffer} has {shortest} elements",
                b.count.1, b.count.0
            ));
        }
        if b.index_end.0 > shortest {
            return Err(format!(
                "index argument {} is {} but buffer argument {buffer} has {shortest} elements",
                b.index_end.1,
                b.index_end.0 - 1
            ));
        }
        let g = config.grid;
        let blocks = u64::from(g.x) * u64::from(g.y) * u64::from(g.z);
        if blocks > b.per_block.0 {
            return Err(format!(
                "buffer argument {} has {} elements, one per block, but the launch has {blocks} blocks",
                b.per_block.1, b.per_block.0
            ));
        }
        Ok(())
    }

    fn bound_buffer(&mut self, len: usize, index: usize) {
        lower(&mut self.bounds.shortest, len as u64, index);
    }

    /// Passes a buffer's address and reports its use.
    fn push_buffer<T>(&mut self, buffer: &Buf<'a, T>, write: bool) {
        self.push_bytes(&buffer.device_ptr().to_ne_bytes());
        self.push_use(buffer.as_use(write));
    }

    /// The execs the encoded arguments let the kernel launch.
    pub(crate) fn execs(&self) -> &[DeviceTarget<'a>] {
        &self.execs
    }

    /// The conditional handles the encoded arguments let the kernel set.
    pub(crate) fn conds(&self) -> &[CondHandle] {
        let written = &self.cond_slots[..self.cond_count];
        // SAFETY: `push_cond` wrote the first `cond_count` slots, and
        // MaybeUninit<T> has T's layout.
        unsafe { &*(written as *const [std::mem::MaybeUninit<CondHandle>] as *const [CondHandle]) }
    }

    /// The buffers the encoded arguments touch.
    pub(crate) fn uses(&self) -> &[BufferUse] {
        let written = &self.use_slots[..self.use_count];
        // SAFETY: `push_use` wrote the first `use_count` slots, and
        // MaybeUninit<T> has T's layout.
        unsafe { &*(written as *const [std::mem::MaybeUninit<BufferUse>] as *const [BufferUse]) }
    }
}

/// A kernel parameter type: what the node takes (`Arg`) and how it is
/// passed to the kernel. Plain values of your own types go through
/// [`Val`].
///
/// # Safety
/// The graph's checks (a buffer used after its free, written through a
/// read-only binding, or bound to another graph; a conditional handle of
/// another graph) see only what `encode` reports. An implementation must
/// encode exactly one parameter slot, and report through the encoder every
/// device buffer, conditional handle and exec whose address or handle it
/// passes, as the runtime's own impls do (delegating to them is how). The
/// bytes it passes must be what the kernel's parameter expects.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kernel parameter type",
    label = "not a kernel parameter",
    note = "parameters are scalars, `[T; N]` arrays, `Val<T>` for a plain-data struct (`#[derive(bytemuck::Pod, bytemuck::Zeroable)]`, `#[repr(C)]`), buffers (`In<T>`, `Out<T>`, `InFirst`, `OutFirst`, `OutPerBlock`), `Len`, `Index`, `Cond` and `ExecParam`"
)]
pub unsafe trait KernelParam: 'static {
    /// The value a kernel node takes for this parameter.
    type Arg<'a>;
    /// Whether the kernel writes the buffer passed here: `cuda_graph!`
    /// refuses, at compile time, to pass a slice bound read-only to such a
    /// parameter (the runtime refuses it at build time as well).
    const WRITES: bool = false;
    #[doc(hidden)]
    fn encode<'a>(
        arg: &Self::Arg<'a>,
        index: usize,
        out: &mut ArgEncoder<'a>,
    ) -> std::result::Result<(), String>;
}

macro_rules! scalar_params {
    ($($t:ty),*) => {$(
        // SAFETY: a plain scalar, passed by value; it touches no memory.
        unsafe impl KernelParam for $t {
            type Arg<'a> = $t;
            fn encode(arg: &$t, _: usize, out: &mut ArgEncoder<'_>) -> std::result::Result<(), String> {
                out.push_bytes(&arg.to_ne_bytes());
                Ok(())
            }
        }
    )*};
}
scalar_params!(i8, i16, i32, i64, i128, u8, u16, u32, u64, u128, f32, f64, usize, isize);

/// A device buffer the kernel only reads (`const T*`), at indices below its
/// [`Len`] arguments and at its [`Index`] arguments: the runtime checks
/// those against the buffer's length, so a declaration can vouch for them.
#[derive(Debug)]
pub struct In<T>(PhantomData<fn() -> T>);

/// A device buffer the kernel writes (`T*`), bounded like [`In`]; the buffer
/// must be writable (bound with `bind_mut`, or a graph allocation).
#[derive(Debug)]
pub struct Out<T>(PhantomData<fn() -> T>);

/// A device buffer the kernel reads at its first `N` elements only (one
/// value, say: `InFirst<u32, 1>`); the runtime checks it has that many.
#[derive(Debug)]
pub struct InFirst<T, const N: usize>(PhantomData<fn() -> T>);

/// A device buffer the kernel writes (and reads) at its first `N` elements
/// only (a counter, a result: `OutFirst<i32, 1>`).
#[derive(Debug)]
pub struct OutFirst<T, const N: usize>(PhantomData<fn() -> T>);

/// A device buffer the kernel writes at one element per block (`partial[
/// blockIdx.x]`, say); the runtime checks it has an element for every block
/// of the launch.
#[derive(Debug)]
pub struct OutPerBlock<T>(PhantomData<fn() -> T>);

/// An element count (`unsigned`): the kernel touches its [`In`] and [`Out`]
/// buffers below it. The runtime refuses a count above any of their lengths,
/// so a safe caller cannot push the kernel out of bounds.
#[derive(Debug)]
pub struct Len;

/// An element index (`unsigned`): the kernel touches its [`In`] and [`Out`]
/// buffers at it. The runtime refuses an index at or past their lengths.
#[derive(Debug)]
pub struct Index;

/// A plain-data value passed by value: a `#[repr(C)]` struct (derive
/// [`bytemuck::Pod`] and [`bytemuck::Zeroable`] for it), an array, a scalar
/// of any width (with graph-runtime's re-export of bytemuck, add
/// `#[bytemuck(crate = "graph_runtime::bytemuck")]` to the derive). The
/// kernel's parameter must have the same layout (a C
/// struct with the same fields in the same order). The node takes the value
/// itself (`Val<Params>` takes a `Params`). Its bytes are data only: the
/// runtime tracks buffers passed as buffer parameters, so a kernel must not
/// treat a field as an address to read or write (a declaration whose kernel
/// does vouches falsely).
#[derive(Debug)]
pub struct Val<T>(PhantomData<fn() -> T>);

/// A conditional handle the kernel may set with `cudaGraphSetConditional`
/// (`unsigned long long` in CUDA C).
#[derive(Debug)]
pub struct Cond;

/// An exec the kernel may launch with `cudaGraphLaunch` (`void*` / a 64-bit
/// integer in CUDA C).
#[derive(Debug)]
pub struct ExecParam;

// SAFETY: passes the buffer's address and reports the buffer as read,
// bounding the node's Len and Index arguments.
unsafe impl<T: 'static> KernelParam for In<T> {
    type Arg<'a> = Buf<'a, T>;
    fn encode<'a>(
        arg: &Buf<'a, T>,
        index: usize,
        out: &mut ArgEncoder<'a>,
    ) -> std::result::Result<(), String> {
        out.push_buffer(arg, false);
        out.bound_buffer(arg.len(), index);
        Ok(())
    }
}

/// `buf` must have at least `n` elements.
fn at_least(arg: usize, len: usize, n: usize) -> std::result::Result<(), String> {
    match len >= n {
        true => Ok(()),
        false => Err(format!(
            "buffer argument {arg} has {len} elements; the kernel touches its first {n}"
        )),
    }
}

// SAFETY: passes the buffer's address, reports it as read, and checks it
// has the N elements the kernel reads.
unsafe impl<T: 'static, const N: usize> KernelParam for InFirst<T, N> {
    type Arg<'a> = Buf<'a, T>;
    fn encode<'a>(
        arg: &Buf<'a, T>,
        index: usize,
        out: &mut ArgEncoder<'a>,
    ) -> std::result::Result<(), String> {
        at_least(index, arg.len(), N)?;
        out.push_buffer(arg, false);
        Ok(())
    }
}

/// Refuses a read-only binding where the kernel writes.
fn writable(arg: &Buf<'_, impl Sized>, index: usize) -> std::result::Result<(), String> {
    match arg.is_writable() {
        true => Ok(()),
        false => Err(format!(
            "argument {index} is written by the kernel, but its buffer was bound read-only; bind it with `bind_mut`"
        )),
    }
}

// SAFETY: as for Out, and checks the N elements the kernel touches.
unsafe impl<T: 'static, const N: usize> KernelParam for OutFirst<T, N> {
    type Arg<'a> = Buf<'a, T>;
    const WRITES: bool = true;
    fn encode<'a>(
        arg: &Buf<'a, T>,
        index: usize,
        out: &mut ArgEncoder<'a>,
    ) -> std::result::Result<(), String> {
        writable(arg, index)?;
        at_least(index, arg.len(), N)?;
        out.push_buffer(arg, true);
        Ok(())
    }
}

// SAFETY: as for Out; the element per block is checked against the launch
// configuration (`ArgEncoder::check_bounds`).
unsafe impl<T: 'static> KernelParam for OutPerBlock<T> {
    type Arg<'a> = Buf<'a, T>;
    const WRITES: bool = true;
    fn encode<'a>(
        arg: &Buf<'a, T>,
        index: usize,
        out: &mut ArgEncoder<'a>,
    ) -> std::result::Result<(), String> {
        writable(arg, index)?;
        out.push_buffer(arg, true);
        lower(&mut out.bounds.per_block, arg.len() as u64, index);
        Ok(())
    }
}

// SAFETY: a 32-bit count, checked against the In/Out buffers' lengths
// (`ArgEncoder::check_bounds`).
unsafe impl KernelParam for Len {
    type Arg<'a> = u32;
    fn encode(
        arg: &u32,
        index: usize,
        out: &mut ArgEncoder<'_>,
    ) -> std::result::Result<(), String> {
        out.push_bytes(&arg.to_ne_bytes());
        raise(&mut out.bounds.count, u64::from(*arg), index);
        Ok(())
    }
}

// SAFETY: a 32-bit index, checked below the In/Out buffers' lengths.
unsafe impl KernelParam for Index {
    type Arg<'a> = u32;
    fn encode(
        arg: &u32,
        index: usize,
        out: &mut ArgEncoder<'_>,
    ) -> std::result::Result<(), String> {
        out.push_bytes(&arg.to_ne_bytes());
        raise(&mut out.bounds.index_end, u64::from(*arg) + 1, index);
        Ok(())
    }
}

// SAFETY: passes the buffer's address and reports the buffer as written
// (refusing a read-only binding), bounding the node's Len and Index
// arguments.
unsafe impl<T: 'static> KernelParam for Out<T> {
    type Arg<'a> = Buf<'a, T>;
    const WRITES: bool = true;
    fn encode<'a>(
        arg: &Buf<'a, T>,
        index: usize,
        out: &mut ArgEncoder<'a>,
    ) -> std::result::Result<(), String> {
        writable(arg, index)?;
        out.push_buffer(arg, true);
        out.bound_buffer(arg.len(), index);
        Ok(())
    }
}

// SAFETY: plain data (Pod: no pointers the runtime would have to track,
// every byte initialised), passed by value; it touches no memory.
unsafe impl<T: bytemuck::Pod> KernelParam for Val<T> {
    type Arg<'a> = T;
    fn encode(arg: &T, _: usize, out: &mut ArgEncoder<'_>) -> std::result::Result<(), String> {
        out.push_bytes(bytemuck::bytes_of(arg));
        Ok(())
    }
}

// SAFETY: arrays of plain scalars, passed by value (a C array member of a
// struct parameter, or a fixed-size array the kernel takes by value).
unsafe impl<T: bytemuck::Pod, const N: usize> KernelParam for [T; N] {
    type Arg<'a> = [T; N];
    fn encode(arg: &[T; N], _: usize, out: &mut ArgEncoder<'_>) -> std::result::Result<(), String> {
        out.push_bytes(bytemuck::cast_slice(arg.as_slice()));
        Ok(())
    }
}

// SAFETY: passes the handle's value and reports the handle as set.
unsafe impl KernelParam for Cond {
    type Arg<'a> = CondHandle;
    fn encode(
        arg: &CondHandle,
        _: usize,
        out: &mut ArgEncoder<'_>,
    ) -> std::result::Result<(), String> {
        out.push_bytes(&arg.raw().to_ne_bytes());
        out.push_cond(*arg);
        Ok(())
    }
}

// SAFETY: passes the exec's handle and reports the exec as launched.
unsafe impl KernelParam for ExecParam {
    type Arg<'a> = DeviceExec<'a>;
    fn encode<'a>(
        arg: &DeviceExec<'a>,
        _: usize,
        out: &mut ArgEncoder<'a>,
    ) -> std::result::Result<(), String> {
        out.push_bytes(&arg.raw().to_ne_bytes());
        out.push_exec(arg.target());
        Ok(())
    }
}

/// A kernel's whole parameter list: a tuple of [`KernelParam`]s. Sealed:
/// the tuples up to 12 parameters are all there is.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kernel parameter list: write a tuple of parameter types",
    label = "not a tuple of kernel parameters",
    note = "one parameter is a tuple of one: `(Out<f32>,)`, with the trailing comma"
)]
pub trait KernelArgs: 'static + sealed::Sealed {
    /// The tuple of values a kernel node takes.
    type Args<'a>;
    #[doc(hidden)]
    fn encode<'a>(
        args: &Self::Args<'a>,
        out: &mut ArgEncoder<'a>,
    ) -> std::result::Result<(), String>;
}

macro_rules! tuple_args {
    ($($p:ident $i:tt),*) => {
        impl<$($p: KernelParam),*> sealed::Sealed for ($($p,)*) {}
        impl<$($p: KernelParam),*> KernelArgs for ($($p,)*) {
            type Args<'a> = ($($p::Arg<'a>,)*);
            #[allow(unused_variables)]
            fn encode<'a>(args: &Self::Args<'a>, out: &mut ArgEncoder<'a>) -> std::result::Result<(), String> {
                $($p::encode(&args.$i, $i, out)?;)*
                Ok(())
            }
        }
    };
}
macro_rules! param_at {
    (@one [$($p:ident)*] $i:tt $q:ident) => {
        impl<$($p: KernelParam),*> ParamAt<$i> for ($($p,)*) {
            type Param = $q;
        }
    };
    ($ps:tt; $($i:tt $q:ident),*) => {$(
        param_at!(@one $ps $i $q);
    )*};
}
param_at!([A]; 0 A);
param_at!([A B]; 0 A, 1 B);
param_at!([A B C]; 0 A, 1 B, 2 C);
param_at!([A B C D]; 0 A, 1 B, 2 C, 3 D);
param_at!([A B C D E]; 0 A, 1 B, 2 C, 3 D, 4 E);
param_at!([A B C D E F]; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F);
param_at!([A B C D E F G]; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G);
param_at!([A B C D E F G H]; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H);
param_at!([A B C D E F G H I]; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I);
param_at!([A B C D E F G H I J]; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J);
param_at!([A B C D E F G H I J K]; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K);
param_at!([A B C D E F G H I J K L]; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L);

tuple_args!();
tuple_args!(A 0);
tuple_args!(A 0, B 1);
tuple_args!(A 0, B 1, C 2);
tuple_args!(A 0, B 1, C 2, D 3);
tuple_args!(A 0, B 1, C 2, D 3, E 4);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);

mod sealed {
    /// Implemented for the parameter tuples alone.
    pub trait Sealed {}
}

/// 64-bit FNV-1a: a cheap content hash for the module cache key.
fn fnv1a(bytes: &[u8]) -> usize {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash = (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash as usize
}

/// Modules loaded so far: (source hash, source length, context) -> module.
/// Held for the life of the process, so each source is compiled and loaded
/// once per context.
type ModuleCache = Vec<((usize, usize, usize), Arc<CudaModule>)>;
static MODULES: Mutex<ModuleCache> = Mutex::new(Vec::new());

fn cached_module(source: Source, name: &str, ctx: &Arc<CudaContext>) -> Result<Arc<CudaModule>> {
    let bytes = match source {
        Source::CudaC(s) | Source::Ptx(s) => s.as_bytes(),
        Source::Cubin(b) => b,
    };
    // Keyed by content: a `const` declaration may hand out copies of its text.
    let key = (fnv1a(bytes), bytes.len(), ctx.cu_ctx() as usize);
    // A poisoned lock only means another thread panicked while compiling;
    // the cache itself is a plain Vec and stays consistent.
    let mut cache = MODULES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, module)) = cache.iter().find(|(k, _)| *k == key) {
        return Ok(module.clone());
    }
    let ptx = match source {
        Source::CudaC(src) => compile(src, name, ctx)?,
        Source::Ptx(text) => cudarc::nvrtc::Ptx::from_src(text),
        Source::Cubin(image) => cudarc::nvrtc::Ptx::from_binary(image.to_vec()),
    };
    let module = ctx.load_module(ptx).op_at("cuModuleLoadData", name)?;
    cache.push((key, module.clone()));
    Ok(module)
}

fn compile(src: &str, name: &str, ctx: &Arc<CudaContext>) -> Result<cudarc::nvrtc::Ptx> {
    crate::driver::require_nvrtc()?;
    let (major, minor) = ctx.compute_capability().op("cuDeviceGetAttribute")?;
    let options = cudarc::nvrtc::CompileOptions {
        arch: Some(arch_name(major, minor)),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(src, options).map_err(|e| {
        let (reason, log) = match e {
            cudarc::nvrtc::CompileError::CompileError { nvrtc, log, .. } => {
                (format!("{nvrtc:?}"), log.to_string_lossy().into_owned())
            }
            other => (format!("{other:?}"), String::new()),
        };
        GraphError::Compile {
            kernel: name.to_string(),
            reason,
            log,
        }
    })
}

/// NVRTC's `--gpu-architecture` value for a compute capability. cudarc wants
/// a `&'static str`; the few distinct names are leaked once each.
fn arch_name(major: i32, minor: i32) -> &'static str {
    static NAMES: Mutex<Vec<(i32, i32, &'static str)>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&(_, _, name)) = names.iter().find(|(a, b, _)| (*a, *b) == (major, minor)) {
        return name;
    }
    let name: &'static str = Box::leak(format!("compute_{major}{minor}").into_boxed_str());
    names.push((major, minor, name));
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_config_validation() {
        assert!(LaunchConfig::new(1, 32).validate().is_ok());
        assert!(LaunchConfig::new(0, 32)
            .validate()
            .unwrap_err()
            .contains("grid 0x1x1"));
        assert!(LaunchConfig::new(1, (32, 0))
            .validate()
            .unwrap_err()
            .contains("block 32x0x1"));
        assert!(LaunchConfig::new(1, (64, 32))
            .validate()
            .unwrap_err()
            .contains("2048 threads"));
        assert_eq!(LaunchConfig::for_elements(1000, 256).grid, Dim3::from(4));
    }

    #[test]
    fn scalar_arguments_are_encoded_in_native_layout() {
        let mut out = ArgEncoder::default();
        <(u32, f64, u8) as KernelArgs>::encode(&(7, 1.5, 3), &mut out).unwrap();
        let (values, starts) = out.values();
        assert_eq!(starts, [0, 1, 2]);
        assert_eq!(values[0] as u32, 7);
        assert_eq!(f64::from_bits(values[1]), 1.5);
        assert_eq!(values[2] as u8, 3);
    }

    #[repr(C)]
    #[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    struct Params {
        scale: f32,
        offset: f32,
        count: u64,
        bias: [f32; 2],
    }

    #[test]
    fn structs_take_the_words_they_need() {
        let mut out = ArgEncoder::default();
        let params = Params {
            scale: 2.0,
            offset: -1.0,
            count: 7,
            bias: [0.5, 0.25],
        };
        <(u32, Val<Params>, [u16; 3]) as KernelArgs>::encode(&(9, params, [1, 2, 3]), &mut out)
            .unwrap();
        let (values, starts) = out.values();
        // 4 bytes, then 24 bytes (three words), then 6 bytes (one word).
        assert_eq!(starts, [0, 1, 4]);
        let bytes: &[u8] = bytemuck::cast_slice(&values[1..4]);
        assert_eq!(bytes, bytemuck::bytes_of(&params));
        assert_eq!(values[4] & 0xFFFF_FFFF_FFFF, 0x0003_0002_0001);
        assert!(out.check_bounds(&LaunchConfig::new(1, 1)).is_ok());
    }

    #[test]
    fn arguments_past_a_nodes_room_are_refused() {
        let mut out = ArgEncoder::default();
        let big = [0u64; 30];
        <(Val<[u64; 30]>, Val<[u64; 30]>) as KernelArgs>::encode(&(big, big), &mut out).unwrap();
        let err = out.check_bounds(&LaunchConfig::new(1, 1)).unwrap_err();
        assert!(err.contains("256 bytes"), "{err}");
    }

    #[test]
    fn arch_names_are_interned() {
        assert_eq!(arch_name(9, 0), "compute_90");
        assert!(std::ptr::eq(arch_name(9, 0), arch_name(9, 0)));
    }
}
