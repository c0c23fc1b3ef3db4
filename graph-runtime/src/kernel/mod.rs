//! Typed kernel declarations. A declaration names a kernel in CUDA C, PTX or
//! cubin and states its parameter types; kernel nodes take arguments of those
//! types, so rustc checks every argument. CUDA C is compiled by NVRTC for the
//! current device on first use and cached once per context per process.

use crate::buffer::DeviceTarget;
use crate::buffer::{Buf, BufferUse};
use crate::error::{ArgumentRefusal, DriverResultExt, GraphError, Result};
use crate::handle::CondHandle;
use crate::handle::DeviceExec;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

/// What every CUDA C kernel declared with [`KernelDecl::cuda_c`] gets
/// before its source, as NVRTC has no CUDA runtime headers: the device-side
/// API a kernel needs to drive the graph's conditional nodes.
///
/// - `cudaGraphConditionalHandle`: the type of a [`Cond`] parameter
///   (`unsigned long long`);
/// - `cudaGraphSetConditional(handle, value)`: sets the handle, so an IF
///   body runs (non-zero), a WHILE body runs again (non-zero) or a SWITCH
///   picks arm `value`. The driver resolves it (no `-rdc` needed).
///
/// Declaring them again in a source is harmless (the same declaration
/// twice is valid C++). NVRTC's error lines stay those of the source.
///
/// A kernel of one's own driving a WHILE loop, with no declaration of its
/// own:
///
/// ```
/// use graph_runtime::kernel::{Cond, OutFirst};
///
/// const HALVE_UNTIL_SMALL: &str = r#"
/// extern "C" __global__ void halve_until_small(cudaGraphConditionalHandle again, float* x) {
///     if (threadIdx.x == 0 && blockIdx.x == 0) {
///         x[0] *= 0.5f;
///         cudaGraphSetConditional(again, x[0] > 1.0f);
///     }
/// }"#;
///
/// graph_runtime::declare_kernel! {
///     // SAFETY: matches `halve_until_small(unsigned long long, float*)`; it
///     // touches x[0] only, which `OutFirst<f32, 1>` has the runtime check.
///     pub HalveUntilSmall: (Cond, OutFirst<f32, 1>) =
///         unsafe cuda_c(HALVE_UNTIL_SMALL, "halve_until_small");
/// }
///
/// graph_runtime::cuda_graph! {
///     graph Halve(x: &mut graph_runtime::cudarc::driver::CudaSlice<f32>) {
///         cond again = 1;
///         halving: while again {
///             step: kernel HalveUntilSmall<<<1, 32>>>(again, x);
///         }
///     }
/// }
/// assert!(graph_runtime::kernel::DEVICE_PRELUDE.contains("cudaGraphSetConditional"));
/// ```
pub const DEVICE_PRELUDE: &str = "\
// graph_runtime::kernel::DEVICE_PRELUDE
typedef unsigned long long cudaGraphConditionalHandle;
extern \"C\" __device__ void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value);
";

/// A kernel parameter that only reads its buffer ([`In`], [`InFirst`]).
/// `cuda_graph!`'s compile-time checks name it: a buffer bound read-only,
/// or one that another node may access at the same time, may only go to
/// such a parameter. (Hidden from the docs, which also keeps rustc from
/// listing it in those errors.)
#[doc(hidden)]
#[derive(Debug)]
pub struct ReadingParameter;

/// A kernel parameter that writes its buffer ([`Out`], [`OutFirst`],
/// [`OutPerBlock`]): what rustc names when `cuda_graph!` finds one where
/// only a reading parameter ([`In`], [`InFirst`]) may go.
#[derive(Debug)]
pub struct WritingParameter;

mod arity;
mod config;
mod counts;
mod encode;
mod load;
mod params;
mod stream;
mod struct_param;

pub use arity::*;
pub use config::{Dim3, LaunchConfig, LaunchDim};
pub use counts::{Count, InLen, OutLen, COUNTS};
pub use encode::ArgEncoder;
use load::cached_module;
pub use load::LoadedKernels;
pub use params::*;
pub(crate) use stream::param_pointers;
pub use stream::{StreamBuffer, StreamBufferMut, StreamLaunch};

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
    no_alias: bool,
    _args: PhantomData<fn(A)>,
}

impl<A> KernelDecl<A> {
    /// A kernel in CUDA C source, compiled by NVRTC on first use.
    ///
    /// # Safety
    /// The kernel named `name` in `source` must take parameters matching `A`
    /// in order and layout, access only memory it is given, in bounds, and
    /// set only the conditional handles it is given as [`Cond`] parameters
    /// (`cudaGraphSetConditional` is declared for every source: see
    /// [`DEVICE_PRELUDE`]).
    pub const unsafe fn cuda_c(source: &'static str, name: &'static str) -> Self {
        KernelDecl {
            source: Source::CudaC(source),
            name,
            pdl_aware: false,
            no_alias: false,
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
            no_alias: false,
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
            no_alias: false,
            _args: PhantomData,
        }
    }

    /// Declares the kernel PDL-aware: it may follow a programmatic dependent
    /// launch edge (`-(programmatic)->`, `-(launch_order)->`), which lets it
    /// start before its predecessor has finished.
    ///
    /// # Safety
    /// Every thread of the kernel executes `griddepcontrol.wait` (`pdl_wait()`
    /// of the `kernels` crate's PDL prelude), a thread that touches no
    /// memory of the nodes before it too, and before any effect another
    /// node could see or race with: reading or writing memory a node before
    /// it touches, setting a conditional handle, launching a graph from the
    /// device. That wait returns once every predecessor grid has completed
    /// and its writes are visible; so the kernel completes only after its
    /// predecessors, and acts only after them, which the graph's checks rely
    /// on (a free ordered after it is ordered after them; two setters of a
    /// handle joined through it are ordered). (The runtime refuses to
    /// disable such a kernel: disabled, it would wait for nothing.)
    pub const unsafe fn pdl_aware(mut self) -> Self {
        self.pdl_aware = true;
        self
    }

    /// Has the runtime refuse a node or launch of the kernel whose written
    /// buffer overlaps another of its buffer arguments (`unsafe no_alias
    /// cuda_c(..)` in [`declare_kernel!`](crate::declare_kernel)): for a
    /// kernel that reads some elements while other threads write others,
    /// such as a sparse product reading `x[cols[j]]` while writing `y[row]`,
    /// for which an alias would be a data race. (Kernels that read and
    /// write each element in the same thread, in place, need not.)
    pub const fn no_alias(mut self) -> Self {
        self.no_alias = true;
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
    ///
    /// # Errors
    /// [`GraphError::NoNvrtc`] for CUDA C without libnvrtc;
    /// [`GraphError::Compile`] with NVRTC's log;
    /// [`GraphError::Driver`] when the module or the function
    /// cannot be loaded.
    pub fn load(&self, ctx: &Arc<CudaContext>) -> Result<Kernel<A>> {
        let module = cached_module(self.source, self.name, ctx)?;
        let function = module
            .load_function(self.name)
            .op_at("cuModuleGetFunction", self.name)?;
        Ok(Kernel {
            function,
            no_alias: self.no_alias,
            home: Some(ctx.clone()),
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
    ///
    /// # Errors
    /// As [`KernelDecl::load`].
    fn load(ctx: &Arc<CudaContext>) -> Result<Kernel<Self::Args>> {
        Self::DECL.load(ctx)
    }

    /// The loaded kernel for `ctx`, as generated builders take it: a
    /// declared kernel's is borrowed from its declaration's cache, with no
    /// lock taken and no reference count touched (a build of a few nodes
    /// made both per kernel type); otherwise [`KernelDef::load`]'s.
    ///
    /// # Errors
    /// As [`KernelDef::load`].
    #[doc(hidden)]
    fn __loaded(ctx: &Arc<CudaContext>) -> Result<std::borrow::Cow<'static, Kernel<Self::Args>>> {
        Self::load(ctx).map(std::borrow::Cow::Owned)
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
/// A `Len` is one count checked against every `In` and `Out` buffer of the
/// node: it must not exceed the shortest. A kernel whose buffers have
/// lengths of their own (CSR's row offsets of n + 1 against nnz values)
/// ties each buffer to its own count: [`Count<C>`](Count) parameters, and
/// [`InLen<T, C, PLUS>`](InLen) / [`OutLen<T, C, PLUS>`](OutLen) buffers
/// that must hold count `C` plus `PLUS` elements (see [`Count`]).
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
/// A kernel that reads elements other threads write (a stencil reading
/// its neighbours, a sparse product reading `x[cols[j]]` while writing
/// `y[row]`) races if its written buffer overlaps another of its
/// arguments; `unsafe no_alias cuda_c(..)` has the runtime refuse such
/// arguments ([`KernelDecl::no_alias`]), so its promise need not cover them.
///
/// A kernel that may follow a programmatic dependent launch edge says so
/// with `unsafe pdl_aware`: its promise adds that every thread waits on its
/// predecessors (`griddepcontrol.wait`), unconditionally, before touching
/// their memory, setting a conditional handle or launching a graph. This
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
                ::core::result::Result::Ok(::std::borrow::Cow::into_owned(Self::__loaded(ctx)?))
            }

            fn __loaded(
                ctx: &::std::sync::Arc<$crate::cudarc::driver::CudaContext>,
            ) -> $crate::Result<::std::borrow::Cow<'static, $crate::kernel::Kernel<$args>>> {
                static LOADED: $crate::kernel::LoadedKernels<$args> = $crate::kernel::LoadedKernels::new();
                ::core::result::Result::Ok(::std::borrow::Cow::Borrowed(LOADED.get_or_load(ctx, &Self::DECL)?))
            }
        }
    };
    ($(#[$meta:meta])* $vis:vis $name:ident: $args:ty = unsafe pdl_aware $source:ident($($arg:expr),* $(,)?); $($rest:tt)*) => {
        $crate::declare_kernel!(@one [$(#[$meta])*] $vis $name: $args =
            // SAFETY: promised by the `unsafe` at the declaration.
            unsafe { $crate::kernel::KernelDecl::$source($($arg),*).pdl_aware() });
        // SAFETY: the declaration's `unsafe pdl_aware` states that the
        // kernel waits on its predecessors.
        #[diagnostic::do_not_recommend]
        unsafe impl $crate::kernel::PdlAware for $name {}
        $crate::declare_kernel!($($rest)*);
    };
    ($(#[$meta:meta])* $vis:vis $name:ident: $args:ty = unsafe no_alias $source:ident($($arg:expr),* $(,)?); $($rest:tt)*) => {
        $crate::declare_kernel!(@one [$(#[$meta])*] $vis $name: $args =
            // SAFETY: promised by the `unsafe` at the declaration.
            unsafe { $crate::kernel::KernelDecl::$source($($arg),*) }.no_alias());
        $crate::declare_kernel!($($rest)*);
    };
    ($(#[$meta:meta])* $vis:vis $name:ident: $args:ty = unsafe $source:ident($($arg:expr),* $(,)?); $($rest:tt)*) => {
        $crate::declare_kernel!(@one [$(#[$meta])*] $vis $name: $args =
            // SAFETY: promised by the `unsafe` at the declaration.
            unsafe { $crate::kernel::KernelDecl::$source($($arg),*) });
        $crate::declare_kernel!($($rest)*);
    };
    ($(#[$meta:meta])* $vis:vis $name:ident: $args:ty = unsafe $modifier:ident $source:ident($($arg:expr),* $(,)?); $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "unknown kernel modifier `", ::core::stringify!($modifier), "` in the declaration of `",
            ::core::stringify!($name), "`: expected `no_alias` or `pdl_aware`, as in `unsafe no_alias ",
            ::core::stringify!($source), "(..)`"
        ));
        const _: ::core::marker::PhantomData<$args> = ::core::marker::PhantomData;
        $crate::declare_kernel!($($rest)*);
    };
    ($(#[$meta:meta])* $vis:vis $name:ident: $args:ty = $source:ident($($arg:expr),* $(,)?); $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "declare `", ::core::stringify!($name), "` with `unsafe ", ::core::stringify!($source),
            "(..)`: the declaration promises that the kernel's signature matches its parameter types and that it stays within the memory it is given; say why in a `// SAFETY:` comment"
        ));
        // The parameter types stay used: one error, no unused imports.
        const _: ::core::marker::PhantomData<$args> = ::core::marker::PhantomData;
    };
}

/// A kernel declared PDL-aware (`unsafe pdl_aware cuda_c(..)` in
/// [`declare_kernel!`](crate::declare_kernel)): it may follow a programmatic
/// dependent launch edge. `cuda_graph!` requires it of the kernel after
/// every `-(programmatic)->` and `-(launch_order)->` edge.
#[diagnostic::on_unimplemented(
    message = "kernel `{Self}` is not declared PDL-aware, so it cannot follow a programmatic dependent launch edge",
    label = "this edge lets `{Self}` start before its predecessor finishes",
    note = "once every thread of the kernel waits (`asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");` in CUDA C) before touching its predecessors' memory, declare it with `unsafe pdl_aware cuda_c(..)` in `declare_kernel!`",
    note = "or use `->` for an ordinary dependency"
)]
///
/// # Safety
/// As for [`KernelDecl::pdl_aware`]: every thread of the kernel waits on its
/// predecessors, unconditionally, before touching their memory, setting a
/// conditional handle or launching a graph (so the kernel acts and
/// completes after them). `cuda_graph!` trusts this
/// trait at compile time (the runtime checks the declaration again).
pub unsafe trait PdlAware: KernelDef {
    /// What `cuda_graph!` names after a programmatic edge, so that rustc's
    /// error for an undeclared kernel is the trait's message alone.
    #[doc(hidden)]
    const DECLARED: () = ();
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
    /// Refuse overlapping buffers where one is written ([`KernelDecl::no_alias`]).
    no_alias: bool,
    /// The context it was loaded in (None for `from_function`: cudarc's
    /// functions do not say).
    home: Option<Arc<CudaContext>>,
    name: Arc<str>,
    pdl_aware: bool,
    _args: PhantomData<fn(A)>,
}

impl<A> Clone for Kernel<A> {
    fn clone(&self) -> Self {
        Kernel {
            function: self.function.clone(),
            no_alias: self.no_alias,
            home: self.home.clone(),
            name: self.name.clone(),
            pdl_aware: self.pdl_aware,
            _args: PhantomData,
        }
    }
}

impl<A> Kernel<A> {
    /// Wraps a function loaded with cudarc.
    ///
    /// # Safety
    /// As for [`KernelDecl::cuda_c`]: `function` must take parameters
    /// matching `A` and stay within the memory it is given; and it must be
    /// loaded in the context of the graphs and streams it is used with
    /// (such a kernel does not say its context, so the runtime cannot
    /// refuse another's, as it does for kernels it loads). (Graphs keep the
    /// function's module loaded while they or their execs hold its nodes;
    /// an exec updated from another graph keeps its original graph's
    /// modules, not those of graphs it was updated from in between.)
    pub unsafe fn from_function(function: CudaFunction, name: &str) -> Self {
        Kernel {
            function,
            no_alias: false,
            home: None,
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

    /// Whether overlapping buffer arguments, one written, are refused
    /// ([`KernelDecl::no_alias`]).
    pub fn is_no_alias(&self) -> bool {
        self.no_alias
    }

    /// The context it was loaded in, where known (not for
    /// [`Kernel::from_function`]).
    pub fn home(&self) -> Option<&Arc<CudaContext>> {
        self.home.as_ref()
    }

    /// Whether it is known to be loaded in another context than `ctx`:
    /// the driver launches a function in its own context, so graphs and
    /// streams of `ctx` refuse it (a kernel of
    /// [`Kernel::from_function`] does not say, and is taken on trust).
    pub(crate) fn is_of_other_context(&self, ctx: &CudaContext) -> bool {
        self.home
            .as_ref()
            .is_some_and(|home| home.cu_ctx() != ctx.cu_ctx())
    }
}

#[cfg(test)]
mod tests;
