//! How `cuda_graph!` turns an operand into what a node takes.

use super::Graph;
use crate::buffer::Buf;
use crate::escape::Escaped;
use cudarc::driver::{CudaEvent, CudaSlice};

/// What an operand of `cuda_graph!` may be where the macro binds it (the
/// expression form's `&x` and `&mut x`, and the buffers `rebuild` takes),
/// and what it becomes: a `&CudaSlice<T>` (read) or `&mut CudaSlice<T>`
/// (written) is bound to the graph as a [`Buf`] (so is a reference to
/// one: `&mut x` of a parameter `x: &mut CudaSlice<T>`); an [`Escaped<T>`] is
/// bound with [`Graph::bind_escaped`]; a `Buf` of the graph stays itself;
/// host slices, vectors and events pass through. Sealed: the runtime's
/// types only.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as a graph operand",
    note = "operands are `&CudaSlice<T>`, `&mut CudaSlice<T>` (or through a reference: `&mut *x` of `x: &mut CudaSlice<T>`), `Buf<T>`, host slices or vectors, and `&CudaEvent`"
)]
pub trait Operand<'a>: sealed::Sealed {
    /// What a node takes.
    type Out;
    /// Binds it to `graph` where it needs binding.
    fn into_operand(self, graph: &mut Graph<'a>) -> Self::Out;
}

#[diagnostic::do_not_recommend]
impl<'a, T> Operand<'a> for &'a CudaSlice<T> {
    type Out = Buf<'a, T>;
    fn into_operand(self, graph: &mut Graph<'a>) -> Buf<'a, T> {
        graph.bind(self)
    }
}

#[diagnostic::do_not_recommend]
impl<'a, T: 'static> Operand<'a> for &'a mut CudaSlice<T> {
    type Out = Buf<'a, T>;
    fn into_operand(self, graph: &mut Graph<'a>) -> Buf<'a, T> {
        graph.bind_mut(self)
    }
}

// A slice that is itself a reference (a function's `x: &mut CudaSlice<T>`
// parameter, written `&mut x` as every operand of the expression form is):
// bound through it, for as long as the graph borrows the reference.
#[diagnostic::do_not_recommend]
impl<'a, 'b: 'a, T> Operand<'a> for &'a &'b CudaSlice<T> {
    type Out = Buf<'a, T>;
    fn into_operand(self, graph: &mut Graph<'a>) -> Buf<'a, T> {
        graph.bind(*self)
    }
}

#[diagnostic::do_not_recommend]
impl<'a, 'b: 'a, T> Operand<'a> for &'a &'b mut CudaSlice<T> {
    type Out = Buf<'a, T>;
    fn into_operand(self, graph: &mut Graph<'a>) -> Buf<'a, T> {
        graph.bind(&**self)
    }
}

#[diagnostic::do_not_recommend]
impl<'a, 'b: 'a, T: 'static> Operand<'a> for &'a mut &'b mut CudaSlice<T> {
    type Out = Buf<'a, T>;
    fn into_operand(self, graph: &mut Graph<'a>) -> Buf<'a, T> {
        graph.bind_mut(&mut **self)
    }
}

#[diagnostic::do_not_recommend]
impl<'a, T> Operand<'a> for Escaped<T> {
    type Out = Buf<'a, T>;
    fn into_operand(self, graph: &mut Graph<'a>) -> Buf<'a, T> {
        graph.bind_escaped(self)
    }
}

#[diagnostic::do_not_recommend]
impl<'a, T> Operand<'a> for Buf<'a, T> {
    type Out = Buf<'a, T>;
    fn into_operand(self, _graph: &mut Graph<'a>) -> Buf<'a, T> {
        self
    }
}

#[diagnostic::do_not_recommend]
impl<'a, T> Operand<'a> for &'a [T] {
    type Out = &'a [T];
    fn into_operand(self, _graph: &mut Graph<'a>) -> &'a [T] {
        self
    }
}

#[diagnostic::do_not_recommend]
impl<'a, T> Operand<'a> for &'a Vec<T> {
    type Out = &'a [T];
    fn into_operand(self, _graph: &mut Graph<'a>) -> &'a [T] {
        self
    }
}

#[diagnostic::do_not_recommend]
impl<'a, T> Operand<'a> for &'a mut [T] {
    type Out = &'a mut [T];
    fn into_operand(self, _graph: &mut Graph<'a>) -> &'a mut [T] {
        self
    }
}

#[diagnostic::do_not_recommend]
impl<'a, T> Operand<'a> for &'a mut Vec<T> {
    type Out = &'a mut [T];
    fn into_operand(self, _graph: &mut Graph<'a>) -> &'a mut [T] {
        self
    }
}

#[diagnostic::do_not_recommend]
impl<'a> Operand<'a> for &'a CudaEvent {
    type Out = &'a CudaEvent;
    fn into_operand(self, _graph: &mut Graph<'a>) -> &'a CudaEvent {
        self
    }
}

mod sealed {
    use super::*;
    pub trait Sealed {}
    impl<T> Sealed for &CudaSlice<T> {}
    impl<T> Sealed for &mut CudaSlice<T> {}
    impl<T> Sealed for &&CudaSlice<T> {}
    impl<T> Sealed for &&mut CudaSlice<T> {}
    impl<T> Sealed for &mut &mut CudaSlice<T> {}
    impl<T> Sealed for Escaped<T> {}
    impl<T> Sealed for Buf<'_, T> {}
    impl<T> Sealed for &[T] {}
    impl<T> Sealed for &Vec<T> {}
    impl<T> Sealed for &mut [T] {}
    impl<T> Sealed for &mut Vec<T> {}
    impl Sealed for &CudaEvent {}
}
