//! Graph allocations that outlive a launch, at launch: the state checks
//! that refuse a launch out of turn, the free of the last launch's
//! allocation nobody took, the waits before the launch and, once it is
//! queued, the new state and the record every later operation waits for.

use crate::error::{AllocationState, DriverResultExt, GraphError, Result};
use crate::escape::{EscapeState, Phase, Role};
use crate::ranks::Ranked;
use cudarc::driver::CudaStream;
use std::sync::{Arc, MutexGuard};

/// The allocations of one launch, locked and checked.
pub(super) struct Locked<'g> {
    phases: Vec<(&'g EscapeState, Role, Ranked<MutexGuard<'g, Phase>>)>,
}

/// A launch refused because of allocation `state`'s state.
fn refused(state: &EscapeState, why: AllocationState) -> GraphError {
    GraphError::AllocationRefused {
        operation: "launch",
        label: state.label.clone(),
        state: why,
    }
}

/// Locks `states` in address order, refuses a launch out of turn, frees
/// what the last launch made and nobody took (recorded: whatever comes
/// next follows the free, even if the launch is refused later), and makes
/// `stream` wait for the last operation on each one it uses or frees.
pub(super) fn prepare<'g>(
    states: &'g [(Arc<EscapeState>, Role)],
    stream: &CudaStream,
) -> Result<Locked<'g>> {
    if states.is_empty() {
        // Most execs: nothing to lock (and the launch loop's path).
        return Ok(Locked { phases: Vec::new() });
    }
    let mut order: Vec<(&'g EscapeState, Role)> =
        states.iter().map(|(s, role)| (&**s, *role)).collect();
    order.sort_by_key(|(s, _)| *s as *const EscapeState as usize);
    if let Some(twice) = order.windows(2).find(|w| std::ptr::eq(w[0].0, w[1].0)) {
        return Err(refused(twice[0].0, AllocationState::BoundByItsMaker));
    }
    let mut phases = Vec::with_capacity(order.len());
    for (state, role) in order {
        phases.push((state, role, state.lock()));
    }
    for (state, role, phase) in &mut phases {
        let (state, phase): (&EscapeState, &mut Phase) = (state, phase);
        match role {
            // A use of it could not be waited for, or its last record
            // failed: nothing may free or make it again.
            _ if phase.stuck => return Err(refused(state, AllocationState::Stuck)),
            Role::Make if phase.live && phase.handed_out => {
                return Err(refused(state, AllocationState::TakenAndLive))
            }
            Role::Make if phase.live => {
                state
                    .free_live(phase, stream)
                    .op_at("cuMemFreeAsync", &state.label)?;
                state
                    .record_or_stick(phase, stream)
                    .op_at("cuEventRecord", &state.label)?;
            }
            Role::Free if phase.user_held => {
                return Err(refused(state, AllocationState::HeldByCaller))
            }
            Role::Use | Role::Free if !phase.live => {
                return Err(refused(state, AllocationState::FreedSinceMade))
            }
            _ => match state.order(phase, stream) {
                // Its last record was captured (`EscapeState::order`).
                Err(_) if phase.stuck => return Err(refused(state, AllocationState::Stuck)),
                waited => waited.op_at("cuStreamWaitEvent", &state.label)?,
            },
        }
    }
    Ok(Locked { phases })
}

impl Locked<'_> {
    /// The launch is queued: every allocation takes its new state, even if
    /// a record fails (the first failure is returned after).
    pub(super) fn launched(mut self, stream: &CudaStream) -> Result<()> {
        if self.phases.is_empty() {
            return Ok(());
        }
        let mut recorded = Ok(());
        for (state, role, phase) in &mut self.phases {
            let phase: &mut Phase = phase;
            match role {
                Role::Make => {
                    phase.live = true;
                    phase.handed_out = false;
                    phase.generation += 1;
                }
                Role::Free => phase.live = false,
                Role::Use => {}
            }
            let record = state.record_or_stick(phase, stream);
            recorded = recorded.and(record.op_at("cuEventRecord", &state.label));
        }
        recorded
    }
}
