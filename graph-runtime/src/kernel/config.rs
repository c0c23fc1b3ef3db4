//! Launch configuration: grid and block dimensions, dynamic shared memory.

use crate::error::ArgumentRefusal;

/// Grid or block dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    /// The dimensions `dim` gives (the DSL converts each `<<<grid,
    /// block>>>` dimension the same way, with [`LaunchDim`]'s method at the
    /// dimension's tokens, unless both are `u32` literals: see
    /// `__private::launch`).
    pub fn of(dim: impl LaunchDim) -> Dim3 {
        dim.dim()
    }
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

/// What a DSL launch dimension may be (`<<<grid, block>>>`): a `u32`, a
/// pair or a triple of them. Its own trait, so that rustc's error at a
/// `usize` grid names the fix at the grid's tokens.
#[diagnostic::on_unimplemented(
    message = "a launch dimension is a `u32`, `(u32, u32)` or `(u32, u32, u32)`, not `{Self}`",
    label = "this dimension",
    note = "convert it where you compute it, `n.div_ceil(256) as u32`, having checked (before the build) that it fits"
)]
pub trait LaunchDim {
    #[doc(hidden)]
    fn dim(self) -> Dim3;
}

macro_rules! launch_dims {
    ($($ty:ty),*) => {$(
        // The trait's own note names the types; a list of impls is noise.
        #[diagnostic::do_not_recommend]
        impl LaunchDim for $ty {
            fn dim(self) -> Dim3 {
                self.into()
            }
        }
    )*};
}
launch_dims!(u32, (u32, u32), (u32, u32, u32));

#[diagnostic::do_not_recommend]
impl LaunchDim for Dim3 {
    fn dim(self) -> Dim3 {
        self
    }
}

/// How a kernel node is launched: `<<<grid, block, shared_mem>>>`. The
/// same launch as cudarc's [`LaunchConfig`](cudarc::driver::LaunchConfig)
/// (`From` converts either way), with named dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: Dim3,
    pub block: Dim3,
    pub shared_mem_bytes: u32,
}

impl From<cudarc::driver::LaunchConfig> for LaunchConfig {
    fn from(c: cudarc::driver::LaunchConfig) -> Self {
        LaunchConfig {
            grid: c.grid_dim.into(),
            block: c.block_dim.into(),
            shared_mem_bytes: c.shared_mem_bytes,
        }
    }
}

impl From<LaunchConfig> for cudarc::driver::LaunchConfig {
    fn from(c: LaunchConfig) -> Self {
        cudarc::driver::LaunchConfig {
            grid_dim: (c.grid.x, c.grid.y, c.grid.z),
            block_dim: (c.block.x, c.block.y, c.block.z),
            shared_mem_bytes: c.shared_mem_bytes,
        }
    }
}

impl LaunchConfig {
    /// `<<<grid, block>>>` with no dynamic shared memory; a dimension is a
    /// `u32` or a tuple of two or three.
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> Self {
        LaunchConfig {
            grid: grid.into(),
            block: block.into(),
            shared_mem_bytes: 0,
        }
    }

    /// The same launch with `bytes` of dynamic shared memory per block.
    #[must_use]
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
    pub(crate) fn validate(&self) -> std::result::Result<(), ArgumentRefusal> {
        let (g, b) = (self.grid, self.block);
        let threads = u64::from(b.x) * u64::from(b.y) * u64::from(b.z);
        if g.x != 0 && g.y != 0 && g.z != 0 && threads != 0 && threads <= 1024 {
            return Ok(());
        }
        self.invalid_reason()
    }

    /// Why `validate` refused the configuration (kept off the hot path).
    #[cold]
    fn invalid_reason(&self) -> std::result::Result<(), ArgumentRefusal> {
        let (g, b) = (self.grid, self.block);
        if g.x == 0 || g.y == 0 || g.z == 0 {
            return Err(ArgumentRefusal::ZeroGrid {
                x: g.x,
                y: g.y,
                z: g.z,
            });
        }
        if b.x == 0 || b.y == 0 || b.z == 0 {
            return Err(ArgumentRefusal::ZeroBlock {
                x: b.x,
                y: b.y,
                z: b.z,
            });
        }
        let threads = u64::from(b.x) * u64::from(b.y) * u64::from(b.z);
        if threads > 1024 {
            return Err(ArgumentRefusal::TooManyThreads { threads });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{Dim3, LaunchConfig};

    #[test]
    fn converts_to_and_from_cudarcs_launch_config() {
        let ours = LaunchConfig::new((4, 2), (32, 4, 2)).with_shared_mem(256);
        let theirs: cudarc::driver::LaunchConfig = ours.into();
        assert_eq!(theirs.grid_dim, (4, 2, 1));
        assert_eq!(theirs.block_dim, (32, 4, 2));
        assert_eq!(theirs.shared_mem_bytes, 256);
        let back = LaunchConfig::from(theirs);
        assert_eq!(back, ours);
        assert_eq!(back.block, Dim3 { x: 32, y: 4, z: 2 });
        let elements = LaunchConfig::from(cudarc::driver::LaunchConfig::for_num_elems(1000));
        assert_eq!(elements.shared_mem_bytes, 0);
        assert!(u64::from(elements.grid.x) * u64::from(elements.block.x) >= 1000);
    }
}
