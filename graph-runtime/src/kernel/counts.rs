//! Per-buffer lengths: [`Count<C>`] parameters, and [`InLen`] /
//! [`OutLen`] buffers tied to one of them, for kernels whose buffers have
//! lengths of their own (CSR's row offsets, indices and values).

use super::encode::raise;
use super::params::{at_least, writable, POINTER, UNSIGNED};
use super::*;

/// Count number `C` of a kernel whose buffers have lengths of their own
/// (`unsigned`): the [`InLen`] and [`OutLen`] buffers tied to it must hold
/// at least that many elements (plus their `PLUS`). A kernel has up to
/// four (`Count<0>` .. `Count<3>`); [`Len`] stays the one count of its
/// [`In`] and [`Out`] buffers.
///
/// A CSR sparse matrix-vector product, `y = A x`, with `n` rows, `nnz`
/// stored values and `m` columns:
///
/// ```
/// use graph_runtime::kernel::{Count, InLen, OutLen};
/// # const SPMV: &str = "";
/// graph_runtime::declare_kernel! {
///     // SAFETY: matches `spmv(const unsigned* row_offsets, const unsigned* cols,
///     // const float* values, const float* x, float* y, unsigned n, unsigned nnz,
///     // unsigned m)`; it reads row_offsets[..n + 1], cols and values below nnz
///     // (clamping the offsets it reads to nnz), x at column indices it checks
///     // below m, and writes y[..n] (no_alias: y overlapping x would race).
///     pub Spmv: (InLen<u32, 0, 1>, InLen<u32, 1>, InLen<f32, 1>, InLen<f32, 2>, OutLen<f32, 0>,
///                Count<0>, Count<1>, Count<2>) = unsafe no_alias cuda_c(SPMV, "spmv");
/// }
/// ```
#[derive(Debug)]
pub struct Count<const C: usize>;

/// A device buffer the kernel reads below its [`Count<C>`] argument plus
/// `PLUS` (`const T*`): the runtime checks it holds that many elements.
/// (CSR row offsets of `n + 1` elements: `InLen<u32, 0, 1>` with `n` as
/// `Count<0>`.)
#[derive(Debug)]
pub struct InLen<T, const C: usize, const PLUS: usize = 0>(PhantomData<fn() -> T>);

/// A device buffer the kernel writes below its [`Count<C>`] argument plus
/// `PLUS` (`T*`), checked as [`InLen`]; it must be writable, as for [`Out`].
#[derive(Debug)]
pub struct OutLen<T, const C: usize, const PLUS: usize = 0>(PhantomData<fn() -> T>);

/// How many [`Count`]s a kernel may have.
pub const COUNTS: usize = 4;

/// Refuses a count number past [`COUNTS`] (a declaration's mistake: every
/// launch of the kernel is refused).
fn count_number(c: usize, index: usize) -> std::result::Result<(), ArgumentRefusal> {
    match c < COUNTS {
        true => Ok(()),
        false => Err(ArgumentRefusal::NoSuchCount {
            argument: index,
            count: c,
            counts: COUNTS,
        }),
    }
}

// SAFETY: a 32-bit count, checked against the lengths of the InLen/OutLen
// buffers tied to it (`ArgEncoder::check_bounds`).
unsafe impl<const C: usize> KernelParam for Count<C> {
    type Arg<'a> = u32;
    const FIELD: Option<(usize, usize)> = UNSIGNED;
    fn encode(
        arg: &u32,
        index: usize,
        out: &mut ArgEncoder<'_>,
    ) -> std::result::Result<(), ArgumentRefusal> {
        count_number(C, index)?;
        out.push_scalar(arg.to_ne_bytes());
        raise(&mut out.counts_mut().counts[C], u64::from(*arg), index);
        Ok(())
    }
}

/// Ties buffer argument `index` of `len` elements to count `c` plus `plus`.
fn tie_to_count(
    out: &mut ArgEncoder<'_>,
    (c, plus): (usize, usize),
    len: usize,
    index: usize,
) -> std::result::Result<(), ArgumentRefusal> {
    count_number(c, index)?;
    at_least(index, len, plus)?;
    let room = (len - plus) as u64;
    let tied = &mut out.counts_mut().buffers[c];
    if room < tied.0 {
        *tied = (room, plus as u64, index);
    }
    Ok(())
}

// SAFETY: passes the buffer's address, reports it as read, and ties its
// length to count C (`ArgEncoder::check_bounds`).
unsafe impl<T: 'static, const C: usize, const PLUS: usize> KernelParam for InLen<T, C, PLUS> {
    type Arg<'a> = Buf<'a, T>;
    const FIELD: Option<(usize, usize)> = POINTER;
    fn encode<'a>(
        arg: &Buf<'a, T>,
        index: usize,
        out: &mut ArgEncoder<'a>,
    ) -> std::result::Result<(), ArgumentRefusal> {
        tie_to_count(out, (C, PLUS), arg.len(), index)?;
        out.push_buffer(arg, false);
        Ok(())
    }
}

// SAFETY: as for InLen, reporting the buffer as written (refusing a
// read-only binding).
unsafe impl<T: 'static, const C: usize, const PLUS: usize> KernelParam for OutLen<T, C, PLUS> {
    type Arg<'a> = Buf<'a, T>;
    const FIELD: Option<(usize, usize)> = POINTER;
    const WRITES: bool = true;
    fn encode<'a>(
        arg: &Buf<'a, T>,
        index: usize,
        out: &mut ArgEncoder<'a>,
    ) -> std::result::Result<(), ArgumentRefusal> {
        writable(arg, index)?;
        tie_to_count(out, (C, PLUS), arg.len(), index)?;
        out.push_buffer(arg, true);
        Ok(())
    }
}
