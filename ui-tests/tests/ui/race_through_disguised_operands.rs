// An operand that disguises a buffer still uses it: a length call a
// macro turns back into the buffer, an index that hands one back, a
// struct field's value, a macro's tokens; and a read-only slice in
// parentheses or a macro is still it.
use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::{cuda_graph, Buf};
use std::ops::Index;

#[allow(unused_macros)] // (the graph does not expand: the race is reported)
macro_rules! hide {
    ($a:ident . len ()) => {
        $a
    };
}

pub struct Pick<'a>(pub Buf<'a, f32>);

impl<'a> Index<Pick<'a>> for Buf<'a, f32> {
    type Output = Buf<'a, f32>;
    fn index(&self, pick: Pick<'a>) -> &Buf<'a, f32> {
        Box::leak(Box::new(pick.0))
    }
}

pub struct W<T> {
    pub f: T,
}

cuda_graph! {
    graph ThroughLen(x: &mut CudaSlice<f32>) {
        a: fill x = 0.0f32;
        b: fill hide!(x.len()) = 1.0f32;
    }

    graph ThroughIndex(x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>) {
        a: fill x = 0.0f32;
        b: fill y[Pick(x)] = 1.0f32;
    }

    graph ThroughField() {
        t: alloc f32[32];
        done: free t;
        u: fill W { f: t }.f = 0.0f32;
        t -> done -> u;
    }

    graph ReadOnlyInParens(y: &CudaSlice<f32>) {
        a: fill (y) = 0.0f32;
    }
}

fn main() {}

#[allow(unused_macros)] // (the graphs do not expand: their errors are reported)
macro_rules! pick {
    ($a:ident : $b:tt) => {
        $a
    };
    (. $a:ident) => {
        $a
    };
}

cuda_graph! {
    graph FreedInAMacro() {
        t: alloc f32[32];
        done: free t;
        u: fill pick!(t: _) = 0.0f32;
        t -> done -> u;
    }

    graph ReadOnlyInAMacro(y: &CudaSlice<f32>) {
        a: fill pick!(. y) = 0.0f32;
    }
}
