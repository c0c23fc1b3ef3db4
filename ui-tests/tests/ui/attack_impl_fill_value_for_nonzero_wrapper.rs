// Implementing the fill trait for a wrapper of `NonZeroU32` whose pattern
// is zero: every filled element would be an invalid `NonZeroU32`.
use graph_runtime::memory::FillValue;
use std::num::NonZeroU32;

#[derive(Clone, Copy)]
#[repr(transparent)]
struct NeverZero(NonZeroU32);

impl FillValue for NeverZero {
    fn pattern(self) -> u32 {
        0
    }
}

fn main() {}
