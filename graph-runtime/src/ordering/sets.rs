//! Resource sets at launch: which sets a launch tracks, and, under their
//! locks, cudarc's waits before it and the event records after it.

use crate::buffer::{lock, Binding, LaunchMark, LockedSet, ResourceSet, Resources, UseEvent};
use crate::owned::same_stream;
use crate::ranks::Ranked;
use cudarc::driver::{CudaStream, DriverError};
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
    /// record. A slice lent out since (`stale`) waits again.
    fn acquire(
        &mut self,
        stream: &Arc<CudaStream>,
        managing: bool,
        records: &mut Vec<UseEvent>,
    ) -> Result<(), DriverError> {
        if let Some(owned) = &self.owned {
            owned.order(stream)?;
        }
        let follows = managing
            && self
                .tracked_on
                .as_ref()
                .is_some_and(|s| Arc::ptr_eq(s, stream));
        for binding in &mut self.bindings {
            let event = *binding.use_event();
            if follows && !event.stale {
                records.push(event);
            } else {
                let guard = UseEvent::take(binding.acquire(stream));
                if managing {
                    records.push(guard);
                }
            }
        }
        Ok(())
    }

    /// After the records: notes the launch, and makes the home stream of
    /// each slice bound for reading (where cudarc frees it) wait for it.
    /// cudarc keeps one read event per slice, and a read on another stream
    /// records over it without waiting for it: the free would then no
    /// longer follow this launch, which only the exec's drop waits for (a
    /// forgotten exec's launch could still read freed memory). The homes
    /// wait for an event of the set's own ([`LaunchMark`]), recorded here:
    /// cudarc's read event may be recorded over by another thread between
    /// this launch's record and the wait. A home that is the launch stream
    /// orders the free already; one that is capturing is skipped (the wait
    /// would be captured: the capture race). Without an event (the driver
    /// refused to make one), the launch is waited for on the host.
    fn launched_on(&mut self, stream: &Arc<CudaStream>, managing: bool) {
        if let Some(owned) = &mut self.owned {
            owned.used_on(stream);
        }
        self.tracked_on = managing.then(|| stream.clone());
        let mut homes: Vec<&Arc<CudaStream>> = Vec::new();
        for binding in &mut self.bindings {
            binding.use_event().stale = !managing;
            if let (Binding::Read(slice, _), true) = (&*binding, managing) {
                let home = slice.home();
                if !same_stream(home, stream) && !homes.iter().any(|h| same_stream(h, home)) {
                    homes.push(home);
                }
            }
        }
        if homes.is_empty() {
            return;
        }
        let ctx = stream.context();
        if self.launch_mark.is_none() {
            self.launch_mark = LaunchMark::new(ctx).ok();
        }
        let Some(mark) = self.launch_mark.as_ref() else {
            ctx.record_err(crate::result::synchronize(stream));
            return;
        };
        if let Err(e) = mark.record(stream) {
            ctx.record_err::<()>(Err(e));
            ctx.record_err(crate::result::synchronize(stream));
            return;
        }
        for home in homes {
            // SAFETY: the stream is live (the slice holds it).
            if !unsafe { crate::result::is_capturing(home.cu_stream()) }.unwrap_or(true) {
                ctx.record_err(mark.wait_on(home));
            }
        }
    }
}
