//! Whether CUDA is here. cudarc loads libcuda and libnvrtc on first use and
//! panics if they are missing; these checks turn that into typed errors.

use crate::error::{DriverResultExt, GraphError, Result};
use cudarc::driver::CudaContext;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Whether libcuda can be loaded on this machine (looked up once).
///
/// With the `dynamic-loading` feature cudarc is asked. Without it the
/// crate's user chose how cudarc finds CUDA: linked, the library is there
/// (the program would not have started otherwise); loaded by a mode they set
/// on cudarc directly, cudarc reports a missing library itself (it panics).
pub fn driver_available() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    #[cfg(feature = "dynamic-loading")]
    // SAFETY: only tries to dlopen the library; no other effect.
    let probe = || unsafe { cudarc::driver::sys::is_culib_present() };
    #[cfg(not(feature = "dynamic-loading"))]
    let probe = || true;
    *PRESENT.get_or_init(probe)
}

/// Whether libnvrtc can be loaded on this machine (looked up once; as
/// [`driver_available`] says).
pub fn nvrtc_available() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    #[cfg(feature = "dynamic-loading")]
    // SAFETY: only tries to dlopen the library; no other effect.
    let probe = || unsafe { cudarc::nvrtc::sys::is_culib_present() };
    #[cfg(not(feature = "dynamic-loading"))]
    let probe = || true;
    *PRESENT.get_or_init(probe)
}

pub(crate) fn require_driver() -> Result<()> {
    if driver_available() {
        Ok(())
    } else {
        Err(GraphError::NoDriver)
    }
}

pub(crate) fn require_nvrtc() -> Result<()> {
    if nvrtc_available() {
        Ok(())
    } else {
        Err(GraphError::NoNvrtc)
    }
}

/// The primary context of device `ordinal`, or [`GraphError::NoDriver`] on
/// a machine without CUDA (where cudarc itself would panic).
///
/// Calls return the same `Arc` while any clone of it lives. cudarc counts
/// streams per `Arc`, and the first `new_stream` of a fresh one synchronizes
/// the whole context, which fails (`CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`)
/// while another thread is capturing; sharing the `Arc` keeps that to the
/// first stream of the process.
///
/// # Errors
/// [`GraphError::NoDriver`] without a CUDA driver;
/// [`GraphError::Driver`] when there is no device `ordinal` or
/// its context cannot be made.
pub fn context(ordinal: usize) -> Result<Arc<CudaContext>> {
    static OPEN: Mutex<Vec<(usize, Weak<CudaContext>)>> = Mutex::new(Vec::new());
    require_driver()?;
    // A poisoned lock only means another thread panicked while holding it;
    // the list of weak references is still valid.
    let mut open = OPEN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(ctx) = open
        .iter()
        .find(|(o, _)| *o == ordinal)
        .and_then(|(_, weak)| weak.upgrade())
    {
        return Ok(ctx);
    }
    let ctx = CudaContext::new(ordinal).op("cuDevicePrimaryCtxRetain")?;
    open.retain(|(o, weak)| *o != ordinal && weak.strong_count() > 0);
    open.push((ordinal, Arc::downgrade(&ctx)));
    Ok(ctx)
}

/// The CUDA version the installed driver supports (`cuDriverGetVersion`):
/// 13.0 for a CUDA 13.0 driver. Features such as conditional nodes (12.4)
/// or edge data (12.3) need at least their version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DriverVersion {
    pub major: u32,
    pub minor: u32,
}

impl std::fmt::Display for DriverVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The CUDA version of the installed driver, without initialising CUDA.
///
/// ```no_run
/// let version = graph_runtime::driver::driver_version()?;
/// assert!(version >= graph_runtime::driver::DriverVersion { major: 12, minor: 4 });
/// println!("CUDA driver {version}");
/// # Ok::<(), graph_runtime::GraphError>(())
/// ```
///
/// # Errors
/// [`GraphError::NoDriver`] without a CUDA driver; [`GraphError::Driver`]
/// should the driver refuse the query.
pub fn driver_version() -> Result<DriverVersion> {
    require_driver()?;
    let encoded = crate::result::driver_version().op("cuDriverGetVersion")?;
    // The driver encodes it as 1000 * major + 10 * minor.
    let encoded = u32::try_from(encoded).unwrap_or(0);
    Ok(DriverVersion {
        major: encoded / 1000,
        minor: (encoded % 1000) / 10,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn no_panic_without_cuda() {
        // On a machine with CUDA this opens device 0; without, a typed error.
        match super::context(0) {
            Ok(_) => assert!(super::driver_available()),
            Err(e) => assert!(!super::driver_available() || e.cuda_code().is_some(), "{e}"),
        }
    }
}
