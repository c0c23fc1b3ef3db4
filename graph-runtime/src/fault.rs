//! Panics of host-node closures, kept until an exec can report them: a host
//! closure runs while the driver waits (see `user_object`), so its panic
//! cannot be returned there; the next launch or synchronize of an exec that
//! runs it returns it as [`GraphError::HostPanicked`].

use crate::error::{GraphError, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Panics of host-node closures, waiting to be reported by the next launch
/// or synchronize of an exec that runs them. One per graph family (a graph,
/// its bodies, and the graphs that add it as a child share it).
#[derive(Debug, Default)]
pub(crate) struct HostFaults {
    any: AtomicBool,
    panics: Mutex<Vec<(String, String)>>,
}

impl HostFaults {
    pub(crate) fn push(&self, label: &str, message: String) {
        self.panics
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((label.to_string(), message));
        self.any.store(true, Ordering::Release);
    }

    /// The first panic not yet reported, as an error (the others are
    /// dropped with it: one launch reports one fault).
    pub(crate) fn take(&self) -> Result<()> {
        if !self.any.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut panics = self.panics.lock().unwrap_or_else(|e| e.into_inner());
        self.any.store(false, Ordering::Release);
        let mut taken = std::mem::take(&mut *panics).into_iter();
        let more = taken.len().saturating_sub(1);
        match taken.next() {
            Some((label, message)) => Err(GraphError::HostPanicked {
                label,
                message,
                more,
            }),
            None => Ok(()),
        }
    }
}
