//! Resource sets at launch: which sets a launch tracks, and, under their
//! locks, cudarc's waits before it and the event records after it.

use crate::buffer::{lock, LockedSet, ResourceSet, Resources, UseEvent};
use crate::error::{DriverResultExt, Result};
use crate::ranks::Ranked;
use cudarc::driver::CudaStream;
use std::sync::{Arc, Mutex, MutexGuard};

impl ResourceSet for Mutex<Resources<'_>> {
    fn key(&self) -> usize {
        self as *const Self as *const () as usize
    }

    fn members<'s>(&self, out: &mut Vec<Arc<dyn ResourceSet + 's>>)
    where
        Self: 's,
    {
        let resources = lock(self);
        for child in &resources.children {
            out.push(child.clone());
        }
        for target in &resources.device_targets {
            out.push(target.tracking.clone());
        }
    }

    fn lock_set(&self) -> Box<dyn LockedSet + '_> {
        Box::new(lock(self))
    }
}

/// Every set a launch of `root` tracks: `root`, its children, the execs
/// its kernels launch from the device and theirs, once each, in lock
/// order (by address). Computed when the exec is made or its sets change
/// (instantiation, an update, an argument update that adds a device
/// target), not at every launch: a set added to a shared graph later
/// (another child, another exec's device target) belongs to nodes this
/// exec does not have.
pub(crate) fn tracked_sets<'a>(root: &Arc<dyn ResourceSet + 'a>) -> Vec<Arc<dyn ResourceSet + 'a>> {
    let mut sets: Vec<Arc<dyn ResourceSet + 'a>> = vec![root.clone()];
    let mut next = 0;
    while next < sets.len() {
        let mut found = Vec::new();
        sets[next].members(&mut found);
        for set in found {
            if !sets.iter().any(|s| s.key() == set.key()) {
                sets.push(set);
            }
        }
        next += 1;
    }
    sets.sort_by_key(|s| s.key());
    sets
}

impl LockedSet for Ranked<MutexGuard<'_, Resources<'_>>> {
    fn lent(&self) -> bool {
        self.lent
    }

    /// With cudarc's tracking live (several streams, tracking on), a set
    /// last launched on this stream only records (the stream orders this
    /// launch after that one, which waited for everything before it); the
    /// others wait through cudarc for the slices' pending work, then
    /// record. A slice lent out since (`stale`) waits again. Returns
    /// whether it waited through cudarc.
    fn acquire(
        &mut self,
        stream: &Arc<CudaStream>,
        managing: bool,
        records: &mut Vec<UseEvent>,
        before_join: &mut dyn FnMut() -> Result<()>,
    ) -> Result<bool> {
        if let Some(owned) = &self.owned {
            // Step 1 refused a capturing `stream`.
            owned
                .follow(stream)
                .op("cuStreamWaitEvent (the graph's buffers' last use)")?;
        }
        let follows = managing
            && self
                .tracked_on
                .as_ref()
                .is_some_and(|s| Arc::ptr_eq(s, stream));
        let mut waited = false;
        let tracking = stream.context().is_event_tracking();
        for binding in &mut self.bindings {
            let event = *binding.use_event();
            if follows && !event.stale {
                records.push(event);
            } else {
                if !waited {
                    before_join()?;
                }
                waited = true;
                // Recorded even while cudarc does not track (one stream):
                // a stream made later (or a `fork`, which does not wait for
                // the context) turns its tracking on, and its waits then
                // follow this launch only through the slice's events. Not
                // once tracking is turned off (`disable_event_tracking`).
                let event = UseEvent::take(binding.acquire(stream));
                if tracking {
                    records.push(event);
                }
            }
        }
        Ok(waited)
    }

    fn launched_on(
        &mut self,
        stream: &Arc<CudaStream>,
        managing: bool,
        own: Option<&Arc<std::sync::atomic::AtomicBool>>,
    ) {
        if let Some(owned) = &mut self.owned {
            owned.used_on(stream, own);
        }
        self.tracked_on = managing.then(|| stream.clone());
        for binding in &mut self.bindings {
            binding.use_event().stale = !managing;
        }
    }
}
