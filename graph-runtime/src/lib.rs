//! CUDA graphs for Rust: the `cuda_graph!` macro, checked at compile time,
//! and the safe runtime it expands to, over [cudarc]'s driver API.
//!
//! The runtime is layered like cudarc: [`result`] holds thin `unsafe`
//! wrappers over the `cuGraph*` driver calls; the safe types — [`Graph`],
//! [`Exec`], [`Node`], [`CondHandle`], [`Buf`] — own or borrow what the
//! driver handles refer to, so no safe call can leave an exec pointing at
//! freed memory.
//!
//! Minimum driver: CUDA 12.8 (IF/ELSE and SWITCH conditional nodes; bindings
//! from cudarc's `cuda-12080` feature, which also run on CUDA 13 drivers).
//!
//! ```no_run
//! use graph_runtime::{driver, kernel::{KernelDecl, In, Out}, Graph, LaunchConfig};
//!
//! const SRC: &str = r#"extern "C" __global__ void twice(const float* x, float* y, unsigned n) {
//!     unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
//!     if (i < n) y[i] = 2.0f * x[i];
//! }"#;
//! // SAFETY: the signature matches and the kernel stays within n elements.
//! static TWICE: KernelDecl<(In<f32>, Out<f32>, u32)> = unsafe { KernelDecl::cuda_c(SRC, "twice") };
//!
//! # fn main() -> Result<(), graph_runtime::GraphError> {
//! let ctx = driver::context(0)?;
//! let stream = ctx.default_stream();
//! let x = stream.clone_htod(&[1.0f32, 2.0, 3.0]).unwrap();
//! let mut y = stream.alloc_zeros::<f32>(3).unwrap();
//! let twice = TWICE.load(&ctx)?;
//! {
//!     let mut graph = Graph::new(&ctx)?;
//!     let (xb, yb) = (graph.bind(&x), graph.bind_mut(&mut y));
//!     graph.add_kernel("twice", &twice, LaunchConfig::for_elements(3, 128), (xb, yb, 3), &[])?;
//!     let mut exec = graph.instantiate()?;
//!     exec.launch(&stream)?;
//! }
//! assert_eq!(stream.clone_dtoh(&y).unwrap(), [2.0, 4.0, 6.0]);
//! # Ok(()) }
//! ```
//!
//! [cudarc]: https://docs.rs/cudarc

pub mod buffer;
pub mod cache;
pub mod capture;
pub mod conditional;
pub mod driver;
pub mod error;
pub mod exec;
pub mod graph;
pub mod kernel;
pub mod memory;
pub mod node;
pub mod result;
pub mod user_object;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use buffer::Buf;
pub use cache::{CacheOutcome, GraphCache};
pub use conditional::CondHandle;
pub use error::{GraphError, Result};
pub use exec::{DeviceExec, Exec, InstantiateOptions, KernelNodeMut, NodeMut, UpdateOutcome};
pub use graph::Graph;
pub use kernel::{Kernel, KernelDecl, KernelDef, LaunchConfig};
pub use node::{EdgeKind, KernelNode, Node, NodeKind};

/// bytemuck, re-exported: element types of graph memory, copies and fills
/// are [`bytemuck::Pod`] (derive it for your own `#[repr(C)]` types).
pub use bytemuck;
/// cudarc, re-exported so users and generated code name one version.
pub use cudarc;

pub use graph_macros::cuda_graph;
