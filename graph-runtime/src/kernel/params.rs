//! Kernel parameter types (`In<T>`, `Out<T>`, `Len`, `Val<T>`, ...) and the
//! parameter tuples a declaration states: what each checks and encodes.

use super::encode::{lower, raise};
use super::*;

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
    note = "parameters are scalars, `[T; N]` arrays, `Val<T>` for a plain-data struct (`#[derive(bytemuck::Pod, bytemuck::Zeroable)]`, `#[repr(C)]`), buffers (`In<T>`, `Out<T>`, `InFirst`, `OutFirst`, `OutPerBlock`, `InLen`, `OutLen`), `Len`, `Count<C>`, `Index`, `Cond` and `ExecParam`"
)]
pub unsafe trait KernelParam: 'static {
    /// The value a kernel node takes for this parameter.
    type Arg<'a>;
    /// Whether the kernel writes the buffer passed here: `cuda_graph!`
    /// refuses, at compile time, to pass a slice bound read-only to such a
    /// parameter (the runtime refuses it at build time as well).
    const WRITES: bool = false;
    /// Its (size, alignment) as a field of a struct parameter
    /// ([`kernel_struct!`](crate::kernel_struct)), in the kernel's C
    /// layout; `None` for what a struct cannot hold (handles, execs).
    const FIELD: Option<(usize, usize)> = None;
    #[doc(hidden)]
    fn encode<'a>(
        arg: &Self::Arg<'a>,
        index: usize,
        out: &mut ArgEncoder<'a>,
    ) -> std::result::Result<(), ArgumentRefusal>;
}

macro_rules! scalar_params {
    ($($t:ty),*) => {$(
        // SAFETY: a plain scalar, passed by value; it touches no memory.
        unsafe impl KernelParam for $t {
            type Arg<'a> = $t;
            const FIELD: Option<(usize, usize)> = Some((std::mem::size_of::<$t>(), std::mem::align_of::<$t>()));
            #[inline]
            fn encode(arg: &$t, _: usize, out: &mut ArgEncoder<'_>) -> std::result::Result<(), ArgumentRefusal> {
                out.push_scalar(arg.to_ne_bytes());
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
    const FIELD: Option<(usize, usize)> = POINTER;
    #[inline]
    fn encode<'a>(
        arg: &Buf<'a, T>,
        index: usize,
        out: &mut ArgEncoder<'a>,
    ) -> std::result::Result<(), ArgumentRefusal> {
        out.push_buffer(arg, false);
        out.bound_buffer(arg.len(), index);
        Ok(())
    }
}

/// `buf` must have at least `n` elements.
pub(super) fn at_least(
    arg: usize,
    len: usize,
    n: usize,
) -> std::result::Result<(), ArgumentRefusal> {
    match len >= n {
        true => Ok(()),
        false => Err(ArgumentRefusal::ShorterThanTouched {
            buffer: arg,
            elements: len,
            touched: n,
        }),
    }
}

// SAFETY: passes the buffer's address, reports it as read, and checks it
// has the N elements the kernel reads.
unsafe impl<T: 'static, const N: usize> KernelParam for InFirst<T, N> {
    type Arg<'a> = Buf<'a, T>;
    const FIELD: Option<(usize, usize)> = POINTER;
    #[inline]
    fn encode<'a>(
        arg: &Buf<'a, T>,
        index: usize,
        out: &mut ArgEncoder<'a>,
    ) -> std::result::Result<(), ArgumentRefusal> {
        at_least(index, arg.len(), N)?;
        out.push_buffer(arg, false);
        Ok(())
    }
}

/// Refuses a read-only binding where the kernel writes.
pub(super) fn writable(
    arg: &Buf<'_, impl Sized>,
    index: usize,
) -> std::result::Result<(), ArgumentRefusal> {
    match arg.is_writable() {
        true => Ok(()),
        false => Err(ArgumentRefusal::WrittenButReadOnly { argument: index }),
    }
}

// SAFETY: as for Out, and checks the N elements the kernel touches.
unsafe impl<T: 'static, const N: usize> KernelParam for OutFirst<T, N> {
    type Arg<'a> = Buf<'a, T>;
    const FIELD: Option<(usize, usize)> = POINTER;
    const WRITES: bool = true;
    #[inline]
    fn encode<'a>(
        arg: &Buf<'a, T>,
        index: usize,
        out: &mut ArgEncoder<'a>,
    ) -> std::result::Result<(), ArgumentRefusal> {
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
    const FIELD: Option<(usize, usize)> = POINTER;
    const WRITES: bool = true;
    #[inline]
    fn encode<'a>(
        arg: &Buf<'a, T>,
        index: usize,
        out: &mut ArgEncoder<'a>,
    ) -> std::result::Result<(), ArgumentRefusal> {
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
    const FIELD: Option<(usize, usize)> = UNSIGNED;
    // Inlined into the generic encoder of each kernel's arguments, in the
    // user's crate (a call there otherwise: no cross-crate inlining).
    #[inline]
    fn encode(
        arg: &u32,
        index: usize,
        out: &mut ArgEncoder<'_>,
    ) -> std::result::Result<(), ArgumentRefusal> {
        out.push_scalar(arg.to_ne_bytes());
        raise(&mut out.bounds.count, u64::from(*arg), index);
        Ok(())
    }
}

/// A device address as a struct field (`T*`).
pub(super) const POINTER: Option<(usize, usize)> = Some((8, 8));
/// A count or index as a struct field (`unsigned`).
pub(super) const UNSIGNED: Option<(usize, usize)> = Some((4, 4));

// SAFETY: a 32-bit index, checked below the In/Out buffers' lengths.
unsafe impl KernelParam for Index {
    type Arg<'a> = u32;
    const FIELD: Option<(usize, usize)> = UNSIGNED;
    #[inline]
    fn encode(
        arg: &u32,
        index: usize,
        out: &mut ArgEncoder<'_>,
    ) -> std::result::Result<(), ArgumentRefusal> {
        out.push_scalar(arg.to_ne_bytes());
        raise(&mut out.bounds.index_end, u64::from(*arg) + 1, index);
        Ok(())
    }
}

// SAFETY: passes the buffer's address and reports the buffer as written
// (refusing a read-only binding), bounding the node's Len and Index
// arguments.
unsafe impl<T: 'static> KernelParam for Out<T> {
    type Arg<'a> = Buf<'a, T>;
    const FIELD: Option<(usize, usize)> = POINTER;
    const WRITES: bool = true;
    #[inline]
    fn encode<'a>(
        arg: &Buf<'a, T>,
        index: usize,
        out: &mut ArgEncoder<'a>,
    ) -> std::result::Result<(), ArgumentRefusal> {
        writable(arg, index)?;
        out.push_buffer(arg, true);
        out.bound_buffer(arg.len(), index);
        Ok(())
    }
}

// SAFETY: plain data (Pod: every byte initialised), passed by value; it
// touches no memory. (Pod includes raw pointers, which carry no more
// authority here than a u64: a kernel that treats a value as an address
// does so under its declaration's `unsafe` promise.)
unsafe impl<T: bytemuck::Pod> KernelParam for Val<T> {
    type Arg<'a> = T;
    const FIELD: Option<(usize, usize)> =
        Some((std::mem::size_of::<T>(), std::mem::align_of::<T>()));
    #[inline]
    fn encode(
        arg: &T,
        _: usize,
        out: &mut ArgEncoder<'_>,
    ) -> std::result::Result<(), ArgumentRefusal> {
        out.push_bytes(bytemuck::bytes_of(arg));
        Ok(())
    }
}

// SAFETY: arrays of plain scalars, passed by value (a C array member of a
// struct parameter, or a fixed-size array the kernel takes by value).
unsafe impl<T: bytemuck::Pod, const N: usize> KernelParam for [T; N] {
    type Arg<'a> = [T; N];
    const FIELD: Option<(usize, usize)> =
        Some((std::mem::size_of::<[T; N]>(), std::mem::align_of::<T>()));
    #[inline]
    fn encode(
        arg: &[T; N],
        _: usize,
        out: &mut ArgEncoder<'_>,
    ) -> std::result::Result<(), ArgumentRefusal> {
        out.push_bytes(bytemuck::cast_slice(arg.as_slice()));
        Ok(())
    }
}

// SAFETY: passes the handle's value and reports the handle as set.
unsafe impl KernelParam for Cond {
    type Arg<'a> = CondHandle;
    #[inline]
    fn encode(
        arg: &CondHandle,
        _: usize,
        out: &mut ArgEncoder<'_>,
    ) -> std::result::Result<(), ArgumentRefusal> {
        out.push_scalar(arg.raw().to_ne_bytes());
        out.push_cond(*arg);
        Ok(())
    }
}

// SAFETY: passes the exec's handle and reports the exec as launched.
unsafe impl KernelParam for ExecParam {
    type Arg<'a> = DeviceExec<'a>;
    #[inline]
    fn encode<'a>(
        arg: &DeviceExec<'a>,
        _: usize,
        out: &mut ArgEncoder<'a>,
    ) -> std::result::Result<(), ArgumentRefusal> {
        out.push_scalar(arg.raw().to_ne_bytes());
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
    ) -> std::result::Result<(), ArgumentRefusal>;
}

macro_rules! tuple_args {
    ($($p:ident $i:tt),*) => {
        impl<$($p: KernelParam),*> sealed::Sealed for ($($p,)*) {}
        impl<$($p: KernelParam),*> KernelArgs for ($($p,)*) {
            type Args<'a> = ($($p::Arg<'a>,)*);
            #[allow(unused_variables)]
            #[inline]
            fn encode<'a>(args: &Self::Args<'a>, out: &mut ArgEncoder<'a>) -> std::result::Result<(), ArgumentRefusal> {
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

#[cfg(test)]
mod tests;
