// Even a genuinely plain-data type cannot implement the fill trait: it is
// sealed, so only the runtime says what bytes a fill writes and how wide
// its elements are.
use graph_runtime::bytemuck::{Pod, Zeroable};
use graph_runtime::memory::FillValue;

#[derive(Clone, Copy)]
#[repr(C)]
struct Wide(u64);

// SAFETY: a `u64` wrapper; every bit pattern is valid.
unsafe impl Zeroable for Wide {}
// SAFETY: as above; `repr(C)`, no padding.
unsafe impl Pod for Wide {}

impl FillValue for Wide {
    fn pattern(self) -> u32 {
        self.0 as u32
    }
}

fn main() {}
