//! Struct parameters: a kernel that takes a C struct of buffers and
//! sizes by value, declared with [`kernel_struct!`](crate::kernel_struct),
//! its fields checked as separate arguments would be.

/// Declares a struct a kernel takes by value whose fields are buffers
/// (with their declared access) and plain values: a CUDA C struct of
/// pointers and sizes. The struct (`Name<'a>`, its fields the values the
/// field types take: a [`Buf`](crate::Buf) for a buffer, a `u32` for a count) is what
/// a node or a stream launch passes; `Name<'static>` is the parameter type
/// in a [`declare_kernel!`](crate::declare_kernel) tuple. Each field is
/// checked as a separate argument of its type would be (lengths against
/// counts, a written buffer bound for writing, the buffer ordered and
/// tracked), and `cuda_graph!` checks races on the buffers of a struct
/// literal's fields. The fields are laid out as C lays out the kernel's
/// struct: in order, each at its alignment (buffers as 8-byte pointers;
/// `Len`, `Count` and `Index` as 4-byte `unsigned`; scalars and [`Val`](crate::kernel::Val)
/// as themselves).
///
/// ```
/// use graph_runtime::kernel::{Count, InLen, OutLen};
/// # const SPMV: &str = "";
/// graph_runtime::kernel_struct! {
///     /// `struct Csr { const unsigned* offsets; const unsigned* cols;
///     /// const float* values; unsigned rows; unsigned nnz; };`
///     pub struct Csr {
///         offsets: InLen<u32, 0, 1>,
///         cols: InLen<u32, 1>,
///         values: InLen<f32, 1>,
///         rows: Count<0>,
///         nnz: Count<1>,
///     }
/// }
/// graph_runtime::declare_kernel! {
///     // SAFETY: matches `spmv(Csr a, const float* x, float* y, unsigned m)`: ...
///     pub Spmv: (Csr<'static>, InLen<f32, 2>, OutLen<f32, 0>, Count<2>) = unsafe no_alias cuda_c(SPMV, "spmv");
/// }
/// ```
///
/// Conditional handles and execs cannot be fields; a struct holds at most
/// 12 fields, and a kernel's arguments at most 12 buffers in all. The
/// counts a struct's fields name are the kernel's: its other `Count`s take
/// other numbers (`Csr` above uses 0 and 1, so the kernel's own is 2). A
/// kernel taking the struct alone declares `(Csr<'static>,)`, with the
/// trailing comma. In `cuda_graph!` the argument is a struct literal naming
/// every field (`Csr { offsets, cols, values, rows: n, nnz }`).
#[macro_export]
macro_rules! kernel_struct {
    ($(#[$meta:meta])* $vis:vis struct $name:ident {
        $($(#[$fmeta:meta])* $field:ident : $ty:ty),* $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Clone, Copy)]
        $vis struct $name<'a> {
            $($(#[$fmeta])* pub $field: <$ty as $crate::kernel::KernelParam>::Arg<'a>,)*
        }

        impl<'a> ::core::fmt::Debug for $name<'a> {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct(::core::stringify!($name)).finish_non_exhaustive()
            }
        }

        // SAFETY: each field is encoded by its own type's implementation
        // (which reports its buffers and checks its bounds), then laid out
        // as one struct parameter by `encode_struct`.
        unsafe impl $crate::kernel::KernelParam for $name<'static> {
            type Arg<'a> = $name<'a>;
            const WRITES: bool = false $(|| <$ty as $crate::kernel::KernelParam>::WRITES)*;
            fn encode<'a>(
                arg: &$name<'a>,
                index: usize,
                out: &mut $crate::kernel::ArgEncoder<'a>,
            ) -> ::core::result::Result<(), $crate::error::ArgumentRefusal> {
                out.encode_struct(
                    index,
                    &[$(<$ty as $crate::kernel::KernelParam>::FIELD),*],
                    |fields| {
                        $(<$ty as $crate::kernel::KernelParam>::encode(&arg.$field, index, fields)?;)*
                        ::core::result::Result::Ok(())
                    },
                )
            }
        }

        impl $name<'_> {
            /// Whether field `name`'s parameter type writes its buffer
            /// (`cuda_graph!`'s race and read-only checks ask); a name it
            /// does not know is taken to write (never "reads only").
            #[doc(hidden)]
            pub const fn __field_writes(name: &str) -> bool {
                $(if $crate::__private::field_is(name, ::core::stringify!($field)) {
                    return <$ty as $crate::kernel::KernelParam>::WRITES;
                })*
                true
            }
        }
    };
}
