//! What every example shares: a device, or a one-line explanation and the
//! graph's DOT on a machine without CUDA; and result checks.

use graph_runtime::cudarc::driver::CudaContext;
use std::sync::Arc;

pub type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Device 0, or None after saying why and printing the graphs' DOT.
pub fn device_or_dot(dots: &[&str]) -> Result<Option<Arc<CudaContext>>> {
    if !graph_runtime::driver::driver_available() {
        println!("no CUDA driver on this machine: printing the graph instead of running it");
        for dot in dots {
            print!("{dot}");
        }
        return Ok(None);
    }
    Ok(Some(graph_runtime::driver::context(0)?))
}

/// An error (non-zero exit) unless `ok`.
pub fn ensure(ok: bool, what: impl std::fmt::Display) -> Result {
    if ok {
        println!("ok: {what}");
        Ok(())
    } else {
        Err(format!("wrong result: {what}").into())
    }
}
