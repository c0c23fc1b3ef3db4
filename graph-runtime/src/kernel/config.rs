//! Launch configuration: grid and block dimensions, dynamic shared memory.

/// Grid or block dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
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

/// How a kernel node is launched: `<<<grid, block, shared_mem>>>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: Dim3,
    pub block: Dim3,
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> Self {
        LaunchConfig {
            grid: grid.into(),
            block: block.into(),
            shared_mem_bytes: 0,
        }
    }

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
    pub(crate) fn validate(&self) -> std::result::Result<(), String> {
        let (g, b) = (self.grid, self.block);
        let threads = u64::from(b.x) * u64::from(b.y) * u64::from(b.z);
        if g.x != 0 && g.y != 0 && g.z != 0 && threads != 0 && threads <= 1024 {
            return Ok(());
        }
        self.invalid_reason()
    }

    /// Why `validate` refused the configuration (kept off the hot path).
    #[cold]
    fn invalid_reason(&self) -> std::result::Result<(), String> {
        let (g, b) = (self.grid, self.block);
        if g.x == 0 || g.y == 0 || g.z == 0 {
            return Err(format!("grid {}x{}x{} has a zero dimension", g.x, g.y, g.z));
        }
        if b.x == 0 || b.y == 0 || b.z == 0 {
            return Err(format!(
                "block {}x{}x{} has a zero dimension",
                b.x, b.y, b.z
            ));
        }
        let threads = u64::from(b.x) * u64::from(b.y) * u64::from(b.z);
        if threads > 1024 {
            return Err(format!("block of {threads} threads exceeds CUDA's 1024"));
        }
        Ok(())
    }
}
