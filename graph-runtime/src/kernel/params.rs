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
mod tests {
    use super::*;

    fn buf(len: usize, writable: bool) -> Buf<'static, f32> {
        Buf::new(0x1000, len, writable, 1, None)
    }

    /// Encodes `args` for a launch of 1 x 32 and checks the bounds.
    fn check<A: KernelArgs>(args: A::Args<'static>) -> std::result::Result<(), ArgumentRefusal> {
        let mut encoded = ArgEncoder::default();
        A::encode(&args, &mut encoded)?;
        encoded.check_bounds(&LaunchConfig::new(1, 32))
    }

    type Csr = (
        InLen<f32, 0, 1>,
        InLen<f32, 1>,
        OutLen<f32, 0>,
        Count<0>,
        Count<1>,
    );

    #[test]
    fn counts_bound_their_own_buffers() {
        // n = 10 rows (offsets of 11), nnz = 40: every length fits.
        check::<Csr>((buf(11, false), buf(40, false), buf(10, true), 10, 40)).unwrap();
        // Longer buffers are fine; each count checks only its own buffers.
        check::<Csr>((buf(100, false), buf(40, false), buf(10, true), 10, 40)).unwrap();
        let err = check::<Csr>((buf(10, false), buf(40, false), buf(10, true), 10, 40));
        let offsets = ArgumentRefusal::CountPastBuffer {
            argument: 3,
            count: 10,
            buffer: 0,
            elements: 10,
            plus: 1,
        };
        assert_eq!(err.as_ref().unwrap_err(), &offsets);
        assert_eq!(
            offsets.to_string(),
            "count argument 3 is 10 but buffer argument 0 has 10 elements, and the kernel touches 10 + 1 of them"
        );
        let err = check::<Csr>((buf(11, false), buf(39, false), buf(10, true), 10, 40));
        let values = ArgumentRefusal::CountPastBuffer {
            argument: 4,
            count: 40,
            buffer: 1,
            elements: 39,
            plus: 0,
        };
        assert_eq!(err.as_ref().unwrap_err(), &values);
        assert_eq!(
            values.to_string(),
            "count argument 4 is 40 but buffer argument 1 has 39 elements, and the kernel touches 40 of them"
        );
        // A buffer shorter than its PLUS fails whatever the count.
        let err = check::<Csr>((buf(0, false), buf(40, false), buf(10, true), 0, 40));
        assert_eq!(
            err.unwrap_err(),
            ArgumentRefusal::ShorterThanTouched {
                buffer: 0,
                elements: 0,
                touched: 1
            }
        );
        // OutLen writes: a read-only buffer is refused.
        let err = check::<Csr>((buf(11, false), buf(40, false), buf(10, false), 10, 40));
        assert_eq!(
            err.unwrap_err(),
            ArgumentRefusal::WrittenButReadOnly { argument: 2 }
        );
    }

    crate::kernel_struct! {
        /// `struct { const float* a; unsigned n; double scale; unsigned char flag; }`
        struct Mixed {
            a: In<f32>,
            n: Len,
            scale: Val<f64>,
            flag: u8,
        }
    }

    #[test]
    fn struct_fields_are_laid_out_as_c_and_checked_as_arguments() {
        let a = Buf::new(0x1122_3344_5566_7788, 100, false, 1, None);
        let arg = Mixed {
            a,
            n: 100,
            scale: 0.5,
            flag: 7,
        };
        let mut encoded = ArgEncoder::default();
        <(Mixed<'static>, Len) as KernelArgs>::encode(&(arg, 100), &mut encoded).unwrap();
        encoded.check_bounds(&LaunchConfig::new(1, 32)).unwrap();
        let (words, starts) = encoded.values();
        assert_eq!(starts, [0, 4]);
        // a @ 0, n @ 8, scale @ 16 (8-aligned), flag @ 24, padded to 32.
        assert_eq!(words[0], 0x1122_3344_5566_7788);
        assert_eq!(words[1] as u32, 100);
        assert_eq!(f64::from_bits(words[2]), 0.5);
        assert_eq!(words[3], 7);
        assert_eq!(encoded.uses().len(), 1);
        assert!(!encoded.uses()[0].write);
        // The struct's Len bounds its buffer, as the separate Len does.
        let arg = Mixed {
            a,
            n: 101,
            scale: 0.5,
            flag: 7,
        };
        let mut encoded = ArgEncoder::default();
        <(Mixed<'static>, Len) as KernelArgs>::encode(&(arg, 1), &mut encoded).unwrap();
        let err = encoded.check_bounds(&LaunchConfig::new(1, 32)).unwrap_err();
        assert_eq!(
            err,
            ArgumentRefusal::LengthPastBuffer {
                argument: 0,
                length: 101,
                buffer: 0,
                elements: 100
            }
        );
        const { assert!(!<Mixed<'static> as KernelParam>::WRITES) };
        assert!(!Mixed::__field_writes("a") && Mixed::__field_writes("nope"));
    }

    crate::kernel_struct! {
        /// Twelve buffers: with one more argument, a thirteenth.
        struct Twelve {
            a0: In<f32>, a1: In<f32>, a2: In<f32>, a3: In<f32>, a4: In<f32>, a5: In<f32>,
            a6: In<f32>, a7: In<f32>, a8: In<f32>, a9: In<f32>, a10: In<f32>, a11: In<f32>,
        }
    }

    #[test]
    fn more_buffers_than_a_node_records_are_refused() {
        let b = Buf::<f32>::new(0x1000, 100, true, 1, None);
        let twelve = Twelve {
            a0: b,
            a1: b,
            a2: b,
            a3: b,
            a4: b,
            a5: b,
            a6: b,
            a7: b,
            a8: b,
            a9: b,
            a10: b,
            a11: b,
        };
        let mut encoded = ArgEncoder::default();
        <(Twelve<'static>, Out<f32>, Len) as KernelArgs>::encode(&(twelve, b, 100), &mut encoded)
            .unwrap();
        let err = encoded.check_bounds(&LaunchConfig::new(1, 32)).unwrap_err();
        assert_eq!(err, ArgumentRefusal::TooManyBuffers { most: 12 });
    }

    #[test]
    fn overlapping_buffers_one_written_are_found() {
        let whole = Buf::<f32>::new(0x1000, 100, true, 1, None);
        let (head, tail) = (whole.slice(0..50), whole.slice(50..100));
        let check = |args: (Buf<'static, f32>, Buf<'static, f32>, Buf<'static, f32>)| {
            let mut encoded = ArgEncoder::default();
            <(In<f32>, In<f32>, Out<f32>) as KernelArgs>::encode(&args, &mut encoded).unwrap();
            encoded.check_aliasing(true)
        };
        // Reads may overlap; a write may not overlap anything.
        check((whole, whole, tail.slice(0..0))).unwrap();
        check((head, head, tail)).unwrap();
        let overlap = Err(ArgumentRefusal::OverlapUnderNoAlias);
        assert_eq!(check((whole, head, tail)), overlap);
        assert_eq!(check((head, tail, tail)), overlap);
    }

    #[test]
    fn a_count_past_the_last_number_is_refused() {
        let err = check::<(InLen<f32, 4>, Count<4>)>((buf(8, false), 8));
        let err = err.unwrap_err();
        assert_eq!(
            err,
            ArgumentRefusal::NoSuchCount {
                argument: 0,
                count: 4,
                counts: 4
            }
        );
        assert_eq!(
            err.to_string(),
            "argument 0 names count 4, but a kernel has counts 0 to 3"
        );
    }
}
