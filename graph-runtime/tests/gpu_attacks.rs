//! The attack suite: safe-Rust programs that try to reach undefined
//! behaviour through the runtime's public API. Each test asserts that the
//! runtime refuses the attack with a typed [`GraphError`] (naming the node
//! where there is one), or that what happens is defined: the values read back
//! from the GPU are the expected ones.
//!
//! Classes of attack, one module each:
//!
//! 1. [`alloc_lifetime`]: graph memory reached outside its lifetime through
//!    per-node exec updates (`Exec::set_kernel_args`).
//! 2. [`alloc_identity`]: one graph's allocation used by another graph that
//!    shares its bound buffers (`new_sharing`, `child_graph`), in nodes and
//!    in exec updates; whole-graph updates across graphs with memory nodes.
//! 3. [`conditional_swap`]: a conditional body replaced (`mem::swap`,
//!    `mem::replace`) while its builder runs.
//! 4. [`threads`]: one `CUgraph` used from several threads, by its `Graph`
//!    and its `Exec`s.
//! 5. [`capture_panic`]: a panic inside captured work.
//! 6. [`callbacks`]: driver callbacks (user-object destructors, host nodes)
//!    that call CUDA or panic.
//! 7. [`exec_lifetimes`]: lifetimes the driver does not keep (a dropped
//!    launch stream, a dropped or forgotten exec).
//! 8. [`bounds_and_handles`]: kernel counts, indices and per-block buffers
//!    past a buffer's end; conditional handles of another graph, set by two
//!    unordered kernels or swapped by an exec update; a forgotten launcher
//!    of a device-launched exec; page-locked host memory in copy nodes.
//! 9. [`contexts_and_clones`]: a slice or event of another context, the
//!    per-thread default stream, clones and parents sharing host buffers,
//!    host memory in conditional bodies, a free of part of an allocation, a
//!    host buffer reached through an exec instantiated before it existed.
//! 10. Kernel parameter and element-type attacks are compile errors now
//!     (`Pod` element types; sealed `FillValue`, `CopySource`,
//!     `CopyDestination` and `KernelArgs`; `unsafe trait KernelParam`), so
//!     they live in the compile-fail suite, run by `cargo test -p ui-tests`:
//!     `ui-tests/tests/ui/attack_*.rs` (graph allocations of `Box<u64>` and
//!     `NonZeroU32`, copies into `bool`/`Box`/`NonZero` slices, fills of
//!     `NonZero`, hand-written `FillValue`, `CopySource`, `CopyDestination`,
//!     `KernelArgs` and safe `KernelParam` impls). Nothing of them reaches a
//!     GPU.
//! 11. [`capturing_streams`]: a capture begun (with cudarc's safe
//!     `begin_capture`) on the stream an exec launched on or launches on;
//!     [`dropped_during_capture`]: an exec dropped while that stream
//!     captures, its borrows ending with its launch pending.
//! 12. [`update_pairing`]: a whole-graph update from a graph whose nodes,
//!     or a node's dependencies, were added in another order (the driver
//!     would pair the nodes otherwise than the exec's handles).
//!
//! Three attacks this suite found first got through and are fixed: the
//! first kernel node added on a fresh thread (SIGSEGV in `cuGraphAddNode`,
//! no context was bound for kernel nodes), a launch on another context's
//! stream (cudarc could not track it; with `mem::forget`, a slice was freed
//! under the running graph), and captured work that ends and restarts the
//! capture (`add_capture` used and destroyed a graph cudarc had destroyed).
//! One is still open and `#[ignore]`d: a host closure's CUDA call can
//! deadlock with another thread's `cuGraphExecDestroy`
//! (`callbacks::a_host_closure_calling_cuda_survives_a_concurrent_exec_destruction`):
//! a hang, not undefined behaviour, but host closures should not call CUDA.
//!
//! Every test is ignored unless asked for (`cargo test --
//! --include-ignored`); then a missing driver fails it.

#[path = "gpu_runtime/common.rs"]
#[allow(dead_code)]
mod common;

#[path = "gpu_attacks/alloc_identity.rs"]
mod alloc_identity;
#[path = "gpu_attacks/alloc_lifetime.rs"]
mod alloc_lifetime;
#[path = "gpu_attacks/bounds_and_handles.rs"]
mod bounds_and_handles;
#[path = "gpu_attacks/callbacks.rs"]
mod callbacks;
#[path = "gpu_attacks/capture_panic.rs"]
mod capture_panic;
#[path = "gpu_attacks/capturing_streams.rs"]
mod capturing_streams;
#[path = "gpu_attacks/conditional_swap.rs"]
mod conditional_swap;
#[path = "gpu_attacks/contexts_and_clones.rs"]
mod contexts_and_clones;
#[path = "gpu_attacks/dropped_during_capture.rs"]
mod dropped_during_capture;
#[path = "gpu_attacks/exec_lifetimes.rs"]
mod exec_lifetimes;
#[path = "gpu_attacks/threads.rs"]
mod threads;
#[path = "gpu_attacks/update_pairing.rs"]
mod update_pairing;

use graph_runtime::GraphError;
use std::time::{Duration, Instant};

/// Asserts that `err` (a `&GraphError`) matches `pattern` (a refusal's
/// variant) and names node `label`, in its field and in its text.
macro_rules! expect_refused {
    ($err:expr, $pattern:pat $(if $guard:expr)?, $label:expr) => {{
        let err: &graph_runtime::GraphError = $err;
        let label: &str = $label;
        assert!(
            matches!(err, $pattern $(if $guard)?),
            "expected {} for `{label}`, got {err:?}",
            stringify!($pattern)
        );
        assert_eq!(err.label(), Some(label), "{err:?}");
        assert!(
            err.to_string().contains(&format!("node `{label}`")),
            "the error does not name `{label}`: {err}"
        );
    }};
}
pub(crate) use expect_refused;

/// Asserts `err` is [`GraphError::ForeignHandle`] naming node `label`
/// (`None`: naming an operation, where no node is involved).
#[track_caller]
pub(crate) fn expect_foreign(err: &GraphError, label: Option<&str>) {
    assert!(
        matches!(err, GraphError::ForeignHandle { .. }),
        "expected ForeignHandle, got {err:?}"
    );
    assert_eq!(err.label(), label, "{err:?}");
}

/// Asserts `result` is `Err(GraphError::Poisoned)`.
#[track_caller]
pub(crate) fn expect_poisoned<T: std::fmt::Debug>(result: graph_runtime::Result<T>) {
    assert!(
        matches!(result, Err(GraphError::Poisoned)),
        "expected Poisoned, got {result:?}"
    );
}

/// Polls `done` until it holds or `limit` has passed; returns whether it held.
pub(crate) fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while !done() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

/// `x[i] = i * factor` for `i < n`: what an iota kernel followed by a scale
/// leaves in a buffer.
pub(crate) fn iota_times(n: u32, factor: f32) -> Vec<f32> {
    (0..n).map(|i| i as f32 * factor).collect()
}
