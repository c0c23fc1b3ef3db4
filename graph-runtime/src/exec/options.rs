//! How to instantiate a graph: the options and the driver flags they make.

use cudarc::driver::sys;
use cudarc::driver::CudaStream;

/// How to instantiate a graph: `InstantiateOptions::new()` (or `default()`),
/// then the builder methods (`.device_launch(true)`), so that options added
/// later do not break callers.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct InstantiateOptions<'s> {
    /// Upload the exec on this stream as part of instantiation.
    pub upload: Option<&'s CudaStream>,
    /// Free unfreed graph allocations when the exec is launched again.
    pub auto_free_on_launch: bool,
    /// Make the exec launchable from the device (`cudaGraphLaunch`).
    pub device_launch: bool,
    /// Honour node priorities set with `Graph::set_priority`.
    pub use_node_priority: bool,
}

impl Default for InstantiateOptions<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'s> InstantiateOptions<'s> {
    /// No option set (the default), in a `const` context too.
    pub const fn new() -> Self {
        InstantiateOptions {
            upload: None,
            auto_free_on_launch: false,
            device_launch: false,
            use_node_priority: false,
        }
    }

    /// Uploads the exec on `stream` as part of instantiation.
    #[must_use]
    pub const fn upload(mut self, stream: &'s CudaStream) -> Self {
        self.upload = Some(stream);
        self
    }

    /// Frees unfreed graph allocations when the exec is launched again.
    #[must_use]
    pub const fn auto_free_on_launch(mut self, on: bool) -> Self {
        self.auto_free_on_launch = on;
        self
    }

    /// Makes the exec launchable from the device (`cudaGraphLaunch`).
    #[must_use]
    pub const fn device_launch(mut self, on: bool) -> Self {
        self.device_launch = on;
        self
    }

    /// Honours node priorities set with `Graph::set_priority`.
    #[must_use]
    pub const fn use_node_priority(mut self, on: bool) -> Self {
        self.use_node_priority = on;
        self
    }

    pub(super) fn flags(&self) -> u64 {
        use sys::CUgraphInstantiate_flags as F;
        let mut flags = 0u64;
        if self.auto_free_on_launch {
            flags |= F::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH.0 as u64;
        }
        if self.device_launch {
            flags |= F::CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH.0 as u64;
        }
        if self.use_node_priority {
            flags |= F::CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY.0 as u64;
        }
        if self.upload.is_some() {
            flags |= F::CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD.0 as u64;
        }
        flags
    }
}
