//! One error type for the runtime. Every variant says which operation failed
//! and, where a node is involved, its label; refusals (calls the runtime
//! turned down before the driver saw them) carry a typed reason
//! ([`ArgumentRefusal`], [`OrderRule`], [`Unsupported`], [`StreamRefusal`],
//! [`AllocationState`], [`NodeUpdateRefusal`], [`LaunchRefusal`]), so that
//! programs match on what went wrong.

mod arguments;
mod refusal;
pub use arguments::ArgumentRefusal;
pub use refusal::{
    AllocationState, Foreign, LaunchRefusal, NodeUpdateRefusal, OrderRule, StreamRefusal,
    Unsupported,
};

use cudarc::driver::sys::{self, CUresult};
use cudarc::driver::DriverError;

/// The result of every fallible runtime call.
pub type Result<T, E = GraphError> = std::result::Result<T, E>;

/// What went wrong, with the operation, the CUDA error and the node label.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// libcuda could not be loaded: this machine has no CUDA driver.
    #[error("no CUDA driver: libcuda could not be loaded on this machine")]
    NoDriver,

    /// libnvrtc could not be loaded, so CUDA C kernels cannot be compiled.
    #[error(
        "no NVRTC: libnvrtc could not be loaded (put the CUDA toolkit's lib64 on LD_LIBRARY_PATH)"
    )]
    NoNvrtc,

    /// A driver call failed.
    #[error("{operation} failed{}: {name} ({code})", at_node(.label))]
    Driver {
        operation: &'static str,
        name: String,
        code: u32,
        /// The DSL or builder label of the node involved, where there is one.
        label: Option<String>,
        /// cudarc's error (`Error::source`).
        #[source]
        source: DriverError,
    },

    /// NVRTC rejected a kernel source; `log` is its compile log.
    #[error("compiling kernel `{kernel}` with NVRTC failed: {reason}\n{log}")]
    Compile {
        kernel: String,
        reason: String,
        log: String,
    },

    /// A slice this graph binds, or a buffer it owns, is lent out between
    /// launches ([`Exec::bound_mut`](crate::Exec::bound_mut) or
    /// [`Exec::buffer`](crate::Exec::buffer) of an exec that shares the
    /// graph's bindings): `operation` (a launch of another such exec,
    /// another loan, a new owned buffer) waits for the loan's drop. A loan
    /// whose copy could not be waited for (see
    /// [`memory::OwnedMut`](crate::memory::OwnedMut)) keeps the owned
    /// buffers lent for good.
    #[error("{operation} refused: a slice the graph binds or a buffer it owns is lent out (`Exec::bound_mut`, `Exec::buffer`); drop that loan first")]
    BufferLent { operation: &'static str },

    /// A node's arguments fail its checks: a launch configuration, a
    /// count or index past a buffer's end, lengths that differ, a written
    /// buffer that aliases another under `no_alias`, one edge kind per
    /// dependency, a repeated block's count. Nothing was added or changed;
    /// `reason` is the check, with the values it compared.
    #[error("node `{label}`: {reason}")]
    InvalidArguments {
        label: String,
        reason: ArgumentRefusal,
    },

    /// A node writes (or fills) a buffer bound read-only (`bind`).
    #[error("node `{label}` writes a buffer that was bound read-only; bind it with `bind_mut`")]
    ReadOnlyWrite { label: String },

    /// Node `label` is not ordered against another node as `rule` needs.
    #[error("node `{label}` {rule}")]
    Unordered { label: String, rule: OrderRule },

    /// `operation` does not support this graph, node or buffer.
    #[error("{operation} refused{}: {what}", at_node(.label))]
    Unsupported {
        operation: &'static str,
        /// The node involved, where there is one.
        label: Option<String>,
        what: Unsupported,
    },

    /// The stream passed to `operation` cannot take it.
    #[error("{operation} refused: {stream}")]
    StreamRefused {
        operation: &'static str,
        stream: StreamRefusal,
    },

    /// A graph allocation that outlives launches (made by alloc node
    /// `label`) is not in the state `operation` needs.
    #[error("{operation} refused at node `{label}`: {state}")]
    AllocationRefused {
        operation: &'static str,
        label: String,
        state: AllocationState,
    },

    /// A per-node update of node `label` was refused.
    #[error("updating node `{label}` refused: {reason}")]
    NodeUpdateRefused {
        label: String,
        reason: NodeUpdateRefusal,
    },

    /// `elements` elements of `element_size` bytes do not fit: their size
    /// overflows, or exceeds the device's memory (`device_bytes`).
    #[error("{} cannot hold {elements} elements of {element_size} bytes{}", node_or(.label), device_limit(*.device_bytes))]
    TooLarge {
        /// The node involved, where there is one.
        label: Option<String>,
        elements: usize,
        element_size: usize,
        /// The device's memory, when that is the limit (else the size
        /// overflows).
        device_bytes: Option<usize>,
    },

    /// A file the runtime writes or reads for `operation` failed.
    #[error("{operation}: {source}")]
    Io {
        operation: &'static str,
        #[source]
        source: std::io::Error,
    },

    /// Instantiation failed; the driver named the offending node.
    #[error("cuGraphInstantiateWithParams failed{}: {name} ({code}), {result}", at_node(.label))]
    Instantiate {
        name: String,
        code: u32,
        /// The driver's `CUgraphInstantiateResult`, explained.
        result: String,
        label: Option<String>,
    },

    /// A whole-graph update was refused; `reason` explains the driver's result.
    #[error("cuGraphExecUpdate failed{}: {reason} ({result:?})", at_node(.label))]
    Update {
        result: sys::CUgraphExecUpdateResult,
        reason: &'static str,
        label: Option<String>,
    },

    /// Stream capture failed and was ended and discarded.
    #[error("stream capture for node `{label}` failed in {operation}: {name} ({code}){hint}")]
    Capture {
        label: String,
        operation: &'static str,
        name: String,
        code: u32,
        hint: &'static str,
        /// cudarc's error (`Error::source`).
        #[source]
        source: DriverError,
    },

    /// A capture node's work failed with an error of its own (a library's,
    /// cuBLAS's say: made by [`capture::failed`](crate::capture::failed));
    /// the capture was ended and discarded.
    #[error("captured work{} failed in {operation}: {source}", at_node(.label))]
    CaptureWork {
        /// The capture node's label (`None` until `add_capture` adds it).
        label: Option<String>,
        operation: &'static str,
        /// The work's error (`Error::source`).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// A graph with memory nodes (a CUDA rule) or host buffers may have
    /// only one live exec. A clone of a graph with host buffers
    /// (`try_clone`), or another build of it (a `cuda_graph!` type's
    /// `build` or `rebuild`), has host memory of its own, and an exec of
    /// its own.
    #[error("a graph with memory nodes or host buffers can have only one live exec; drop the other exec first, or, for host buffers, instantiate a clone (`try_clone`) or another build of the graph: those have host memory of their own")]
    SecondExec,

    /// A conditional body was replaced while it was built (`mem::swap` or
    /// `mem::replace` on the `&mut Graph` its builder got): the graph lost
    /// its records and refuses every call.
    #[error("the graph is unusable: a conditional body was replaced (mem::swap or mem::replace) while it was built")]
    Poisoned,

    /// A host node's closure panicked in an earlier launch (the panic was
    /// caught on the runtime's host-node thread; the graph's work went on).
    #[error("host node `{label}` panicked in an earlier launch: {message}{}", more_faults(*.more))]
    HostPanicked {
        label: String,
        message: String,
        /// How many more panics were dropped with this report.
        more: usize,
    },

    /// A declared kernel's launch on a stream ([`Kernel::on`](crate::Kernel::on))
    /// was refused before anything was queued: its arguments fail the
    /// checks a kernel node makes, or the stream cannot take it.
    #[error("launch of kernel `{kernel}` refused: {reason}")]
    LaunchRefused {
        kernel: String,
        reason: LaunchRefusal,
    },

    /// A handle (node, buffer, conditional handle, stream, ...) was used
    /// with a graph, exec or context it does not belong to: `what`, used by
    /// node `label` or, where there is none, passed to `operation`
    /// (`operation` spells the call for the message: match on `what` and
    /// `label`).
    #[error(
        "{what}{} belongs to another graph{}",
        used_at(.label, .operation),
        .what.hint()
    )]
    ForeignHandle {
        what: Foreign,
        label: Option<String>,
        operation: &'static str,
    },
}

fn more_faults(more: usize) -> String {
    match more {
        0 => String::new(),
        n => format!(" (and {n} more host-node panic(s))"),
    }
}

fn used_at(label: &Option<String>, operation: &str) -> String {
    match label {
        Some(label) => format!(" of node `{label}`"),
        None => format!(" passed to `{operation}`"),
    }
}

fn node_or(label: &Option<String>) -> String {
    match label {
        Some(label) => format!("node `{label}`"),
        None => "a buffer".to_string(),
    }
}

fn device_limit(device_bytes: Option<usize>) -> String {
    match device_bytes {
        Some(total) => format!(": more than the device's {total} bytes of memory"),
        None => ": the size overflows".to_string(),
    }
}

fn at_node(label: &Option<String>) -> String {
    match label {
        Some(label) => format!(" at node `{label}`"),
        None => String::new(),
    }
}

impl GraphError {
    /// A driver error from `operation`, with the node label if any.
    pub fn driver(operation: &'static str, code: CUresult, label: Option<&str>) -> Self {
        GraphError::Driver {
            operation,
            name: format!("{code:?}"),
            code: code as u32,
            label: label.map(str::to_string),
            source: DriverError(code),
        }
    }

    /// The CUDA result, if this is a driver error (typed; [`cuda_code`]
    /// is its number).
    ///
    /// [`cuda_code`]: GraphError::cuda_code
    pub fn cuda_result(&self) -> Option<CUresult> {
        match self {
            GraphError::Driver { source, .. } | GraphError::Capture { source, .. } => {
                Some(source.0)
            }
            _ => None,
        }
    }

    /// The CUDA error code, if this is a driver error.
    pub fn cuda_code(&self) -> Option<u32> {
        match self {
            GraphError::Driver { code, .. }
            | GraphError::Instantiate { code, .. }
            | GraphError::Capture { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The DSL or builder label of the node involved, where there is one.
    pub fn label(&self) -> Option<&str> {
        match self {
            GraphError::InvalidArguments { label, .. }
            | GraphError::ReadOnlyWrite { label }
            | GraphError::Unordered { label, .. }
            | GraphError::AllocationRefused { label, .. }
            | GraphError::NodeUpdateRefused { label, .. }
            | GraphError::Capture { label, .. }
            | GraphError::HostPanicked { label, .. } => Some(label),
            GraphError::Driver { label, .. }
            | GraphError::Instantiate { label, .. }
            | GraphError::Update { label, .. }
            | GraphError::CaptureWork { label, .. }
            | GraphError::Unsupported { label, .. }
            | GraphError::TooLarge { label, .. }
            | GraphError::ForeignHandle { label, .. } => label.as_deref(),
            _ => None,
        }
    }

    /// This error, naming node `label` if it is a driver error that names
    /// none.
    pub(crate) fn at_node(mut self, node: &str) -> Self {
        if let GraphError::Driver {
            label: label @ None,
            ..
        } = &mut self
        {
            *label = Some(node.to_string());
        }
        self
    }

    /// `len` elements of `T` do not fit (at node `label`, if any): more
    /// than the device's `device_bytes`, or (`None`) more bytes than
    /// `usize` counts.
    pub(crate) fn too_large<T>(
        label: Option<&str>,
        len: usize,
        device_bytes: Option<usize>,
    ) -> Self {
        GraphError::TooLarge {
            label: label.map(str::to_string),
            elements: len,
            element_size: std::mem::size_of::<T>(),
            device_bytes,
        }
    }

    /// Node `label`'s arguments fail a check (`reason`).
    pub(crate) fn arguments(label: &str, reason: ArgumentRefusal) -> Self {
        GraphError::InvalidArguments {
            label: label.to_string(),
            reason,
        }
    }

    /// `what`, used by node `label` or passed to `operation`, is another
    /// graph's, exec's or context's.
    #[cold]
    pub(crate) fn foreign(what: Foreign, label: Option<&str>, operation: &'static str) -> Self {
        GraphError::ForeignHandle {
            what,
            label: label.map(str::to_string),
            operation,
        }
    }

    /// `operation` does not support `what` (at node `label`, if any).
    pub(crate) fn unsupported(
        operation: &'static str,
        label: Option<&str>,
        what: Unsupported,
    ) -> Self {
        GraphError::Unsupported {
            operation,
            label: label.map(str::to_string),
            what,
        }
    }

    /// Node `label` breaks ordering rule `rule`.
    pub(crate) fn unordered(label: &str, rule: OrderRule) -> Self {
        GraphError::Unordered {
            label: label.to_string(),
            rule,
        }
    }
}

/// The bytes of `len` elements of `T`, or [`GraphError::TooLarge`]
/// (naming node `label`, if any) when they overflow `usize`.
pub(crate) fn byte_len<T>(len: usize, label: Option<&str>) -> Result<usize> {
    len.checked_mul(std::mem::size_of::<T>())
        .ok_or_else(|| GraphError::too_large::<T>(label, len, None))
}

/// cudarc's error from a call the runtime did not make (in a capture's
/// work, say), so that `?` converts it; `operation` is then "a CUDA driver
/// call" (`capture::captured` names the call).
impl From<DriverError> for GraphError {
    fn from(error: DriverError) -> Self {
        GraphError::driver("a CUDA driver call", error.0, None)
    }
}

/// Attaches an operation name (and label) to cudarc's driver errors.
pub(crate) trait DriverResultExt<T> {
    fn op(self, operation: &'static str) -> Result<T>;
    fn op_at(self, operation: &'static str, label: &str) -> Result<T>;
}

impl<T> DriverResultExt<T> for std::result::Result<T, cudarc::driver::DriverError> {
    fn op(self, operation: &'static str) -> Result<T> {
        self.map_err(|e| GraphError::driver(operation, e.0, None))
    }
    fn op_at(self, operation: &'static str, label: &str) -> Result<T> {
        self.map_err(|e| GraphError::driver(operation, e.0, Some(label)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn capture_work_errors_name_the_node_once_labelled() {
        #[derive(Debug)]
        struct Library;
        impl std::fmt::Display for Library {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("LIBRARY_STATUS_BAD")
            }
        }
        impl std::error::Error for Library {}
        let error = |label: Option<&str>| GraphError::CaptureWork {
            label: label.map(str::to_string),
            operation: "libCall",
            source: Box::new(Library),
        };
        assert_eq!(
            error(Some("gemm")).to_string(),
            "captured work at node `gemm` failed in libCall: LIBRARY_STATUS_BAD"
        );
        assert_eq!(
            error(None).to_string(),
            "captured work failed in libCall: LIBRARY_STATUS_BAD"
        );
        assert!(error(Some("gemm")).source().is_some());
    }

    #[test]
    fn refusals_are_typed_name_their_node_and_read_as_one_sentence() {
        let unordered = GraphError::unordered(
            "late",
            OrderRule::UseAfterFree {
                allocation: "tmp".into(),
                free: "free".into(),
            },
        );
        assert_eq!(unordered.label(), Some("late"));
        assert_eq!(
            unordered.to_string(),
            "node `late` uses the allocation of `tmp`, which `free` may already have freed \
             (it is not ordered before the free)"
        );
        let capturing = GraphError::StreamRefused {
            operation: "launch",
            stream: StreamRefusal::Capturing,
        };
        assert_eq!(capturing.label(), None);
        assert!(capturing
            .to_string()
            .starts_with("launch refused: the stream is capturing"));
        let body = GraphError::unsupported("profile", None, Unsupported::ConditionalBody);
        assert_eq!(
            body.to_string(),
            "profile refused: a conditional body is not a whole graph; use the graph that holds it"
        );
        let taken = GraphError::AllocationRefused {
            operation: "launch",
            label: "scratch".into(),
            state: AllocationState::TakenAndLive,
        };
        assert!(
            taken
                .to_string()
                .starts_with("launch refused at node `scratch`: the allocation"),
            "{taken}"
        );
        let huge = GraphError::TooLarge {
            label: Some("huge".into()),
            elements: 10,
            element_size: 4,
            device_bytes: Some(8),
        };
        assert_eq!(
            huge.to_string(),
            "node `huge` cannot hold 10 elements of 4 bytes: more than the device's 8 bytes of memory"
        );
        let driver = GraphError::driver("cuGraphAddNode", CUresult::CUDA_ERROR_INVALID_VALUE, None);
        assert_eq!(driver.at_node("k").label(), Some("k"));
        let arguments = GraphError::arguments(
            "step[4]",
            ArgumentRefusal::LengthPastBuffer {
                argument: 1,
                length: 33,
                buffer: 0,
                elements: 32,
            },
        );
        assert_eq!(arguments.label(), Some("step[4]"));
        assert_eq!(
            arguments.to_string(),
            "node `step[4]`: length argument 1 is 33 but buffer argument 0 has 32 elements"
        );
    }

    #[test]
    fn argument_refusals_display_whatever_their_values() {
        // Safe code can make any variant: no field value panics.
        let odd = ArgumentRefusal::NoSuchCount {
            argument: 0,
            count: 0,
            counts: 0,
        };
        assert!(odd.to_string().starts_with("argument 0 names count 0"));
        let most = ArgumentRefusal::IndexPastBuffer {
            argument: usize::MAX,
            index: u64::MAX,
            buffer: 0,
            elements: 0,
        };
        assert!(most.to_string().contains(&u64::MAX.to_string()));
    }

    #[test]
    fn foreign_handles_name_their_node_or_operation_then_what_would_do() {
        let of_node = GraphError::foreign(Foreign::Buffer, Some("lane"), "add a node");
        assert_eq!(of_node.label(), Some("lane"));
        assert_eq!(
            of_node.to_string(),
            "a buffer of node `lane` belongs to another graph"
        );
        let handle = GraphError::foreign(
            Foreign::ConditionalHandleOfOtherLevel,
            Some("branch"),
            "add a conditional node",
        );
        assert_eq!(
            handle.to_string(),
            "the conditional handle of node `branch` belongs to another graph (create the \
             handle on the graph that holds the conditional node, or on one that holds it \
             through conditional bodies)"
        );
        let kernel = GraphError::foreign(Foreign::Kernel, Some("from_b"), "add a node");
        assert_eq!(kernel.label(), Some("from_b"));
        assert_eq!(
            kernel.to_string(),
            "the kernel of node `from_b` belongs to another graph (it was loaded in another \
             context: load it in the graph's, `K::load(graph.context())`)"
        );
        let passed = GraphError::foreign(Foreign::NotBoundMut, None, "Exec::bound_mut");
        assert_eq!(passed.label(), None);
        assert_eq!(
            passed.to_string(),
            "the buffer passed to `Exec::bound_mut` belongs to another graph (it must be a \
             slice this exec's graph bound with `bind_mut`)"
        );
    }

    #[test]
    fn cudarc_errors_convert_and_chain() {
        fn work() -> Result<()> {
            Err(DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY))?;
            Ok(())
        }
        let err = work().unwrap_err();
        assert_eq!(err.cuda_result(), Some(CUresult::CUDA_ERROR_OUT_OF_MEMORY));
        assert_eq!(err.cuda_code(), Some(2));
        let source = err.source().expect("chains to cudarc's error");
        assert!(source.downcast_ref::<DriverError>().is_some(), "{source:?}");
        assert!(
            err.to_string().contains("CUDA_ERROR_OUT_OF_MEMORY"),
            "{err}"
        );
    }
}
