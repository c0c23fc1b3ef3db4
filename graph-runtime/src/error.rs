//! One error type for the runtime. Every variant says which operation failed
//! and, where a node is involved, its label.

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

    /// A node's arguments were rejected before the driver was called.
    #[error("node `{label}`: {reason}")]
    InvalidNode { label: String, reason: String },

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
    LaunchRefused { kernel: String, reason: String },

    /// A handle (node, buffer, conditional handle) was used with a graph it
    /// does not belong to.
    #[error("{what} belongs to another graph")]
    ForeignHandle { what: String },
}

fn more_faults(more: usize) -> String {
    match more {
        0 => String::new(),
        n => format!(" (and {n} more host-node panic(s))"),
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

    pub(crate) fn invalid(label: &str, reason: impl Into<String>) -> Self {
        GraphError::InvalidNode {
            label: label.to_string(),
            reason: reason.into(),
        }
    }
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
