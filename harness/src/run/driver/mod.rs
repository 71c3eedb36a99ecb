//! Driving the phases: the writes each action makes (paced at its rate), its `until`
//! condition, and its timeout. The driver only writes and waits; what it did is its
//! [`Log`], which [`super::observe`] turns into observations with the sources' reports;
//! what is measured during a phase (at its end, after a kill) is the sources', told through
//! their phase hook ([`PhaseHook`]).
//!
//! One room (file) per action, each behind one trait, `phase::PhaseAction`: `create`,
//! `hold`, `resync`, `update`, `delete`, `outage` (`cloudOutage`), `latency`
//! (`cloudLatency`), `fault` (`cloudFault`), `restart` and `kill_phase` (its kills are
//! [`kill`]'s); the XR groups of a composite scenario are written and waited for by the same
//! actions (`xr_groups`). Most actions run through the trait's default `run`: their writes,
//! then the wait for the phase's `until` (`wait`), with any kills scheduled into the phase
//! beside them. Below the rooms: `state`
//! (what the driver keeps across phases), [`log`], `paced` (the writes at a rate).
//! `cleanup` deletes what a cluster run created.
//!
//! **A new action** is one file and one arm: a file here with a type implementing
//! `PhaseAction` (its `act`, and its own `run` only when the phase ends otherwise than the
//! default's writes then wait; the action's own work may live elsewhere, e.g. in
//! [`super::core`] for composite scenarios), and its arm in `dispatch` in this file, the
//! one `match` over [`Action`].

mod cleanup;
mod core_phase;
mod create;
mod delete;
mod fault;
mod hold;
pub mod kill;
mod kill_phase;
mod latency;
pub mod log;
mod outage;
mod paced;
mod phase;
mod restart;
mod resync;
mod state;
mod update;
mod wait;
mod xr_groups;

use tokio::time::Instant;

pub use cleanup::time_left;
pub use log::{Log, PhaseEnd, Record, Unmet};
use phase::{PhaseAction, Step};

use super::clock::RunClock;
use super::core::xrs::XrLog;
use super::error::RunError;
use super::progress::Progress;
use super::source::hook::PhaseHook;
use super::source::watches::Watches;
use super::target::Target;
use crate::result::PhaseSpan;
use crate::scenario::{Action, Phase, Scenario};
use state::State;

/// Runs phases and keeps what they did.
pub struct Driver<'s> {
    state: State<'s>,
}

impl<'s> Driver<'s> {
    /// A driver for `scenario` whose writes go through `client`.
    #[must_use]
    pub fn new(scenario: &'s Scenario, client: kube::Client, clock: RunClock) -> Self {
        Driver {
            state: State::new(scenario, client, clock),
        }
    }

    /// What the driver did so far.
    #[must_use]
    pub fn log(&self) -> &Log {
        &self.state.log
    }

    /// What the driver did to XRs so far.
    #[must_use]
    pub fn xr_log(&self) -> &XrLog {
        &self.state.xrs.log
    }

    /// Every XR the run created: its API and name.
    #[must_use]
    pub fn created_xrs(&self) -> Vec<(kube::Api<kube::api::DynamicObject>, String)> {
        self.state.xrs.created()
    }

    /// Records a phase the run was interrupted in.
    pub fn record_interrupted(&mut self, phase: &Phase) {
        let start_us = self.state.log.spans.last().map_or(0, |s| s.end_us);
        let end_us = self.state.now_us();
        self.state.log.spans.push(PhaseSpan {
            name: phase.name.clone(),
            start_us,
            end_us,
            completed: false,
            failure: None,
        });
    }

    /// Runs one phase: `hook`'s phase start, its action (its writes, then its wait for its
    /// `until` within its timeout; see `dispatch`), then `hook`'s phase end, and records its
    /// span. Returns
    /// how it ended: a resync phase whose provider reconciles the requested resources
    /// without recording the token stops early with a verdict (`run::handled`).
    ///
    /// # Errors
    /// The provider could not be restarted or killed; failed writes are counted, not fatal.
    pub async fn run_phase<T: Target>(
        &mut self,
        index: usize,
        phase: &Phase,
        target: &mut T,
        watches: &Watches,
        progress: &Progress,
        hook: &mut impl PhaseHook,
    ) -> Result<PhaseEnd, RunError> {
        let start_us = self.state.now_us();
        self.state.in_force = self.state.scenario.faults_during(index);
        let deadline = Instant::now() + phase.timeout;
        let targets = self.state.targets(phase.action.groups());
        let bar = progress.phase(index, &phase.name, phase.action.name(), targets.len());
        hook.phase_start(phase);
        self.state
            .xrs
            .begin_phase(
                phase,
                (target.core_probe(), target.core_metrics()),
                start_us,
                target.cloud(),
            )
            .await;
        let step = Step {
            state: &mut self.state,
            index,
            phase,
            target,
            watches,
            bar: &bar,
            deadline,
            targets: &targets,
            hook: &mut *hook,
        };
        let end = dispatch(step).await?;
        let now_us = self.state.now_us();
        self.state.xrs.end_phase(now_us, target.cloud()).await;
        let completed = end == PhaseEnd::Completed;
        hook.phase_end(phase, completed, target.cloud()).await;
        let failure = match &end {
            PhaseEnd::Failed(f) => {
                bar.finish_as(f.headline());
                progress.line(format_args!(
                    "phase {} FAILED: {}; the run goes on",
                    phase.name,
                    f.message()
                ));
                Some(f.clone())
            }
            _ => {
                bar.finish(completed);
                None
            }
        };
        let end_us = self.state.now_us();
        self.state.log.spans.push(PhaseSpan {
            name: phase.name.clone(),
            start_us,
            end_us,
            completed,
            failure,
        });
        Ok(end)
    }
}

/// The one place an action is chosen: each [`Action`] runs its room's [`PhaseAction`].
///
/// # Errors
/// See [`PhaseAction::run`]: the target failed.
async fn dispatch<T: Target, H: PhaseHook>(step: Step<'_, '_, T, H>) -> Result<PhaseEnd, RunError> {
    let phase = step.phase;
    match &phase.action {
        Action::Create { rate, groups } => {
            create::Create {
                rate: *rate,
                groups,
            }
            .run(step)
            .await
        }
        Action::Hold { duration } => {
            hold::Hold {
                duration: *duration,
            }
            .run(step)
            .await
        }
        Action::Resync {
            rate,
            groups,
            handled_grace,
        } => {
            let handled_grace = *handled_grace;
            resync::Resync {
                rate: *rate,
                groups,
                handled_grace,
            }
            .run(step)
            .await
        }
        Action::Update { rate, groups, spec } => {
            update::Update {
                rate: *rate,
                groups,
                spec,
            }
            .run(step)
            .await
        }
        Action::CloudOutage { duration, status } => {
            outage::Outage {
                duration: *duration,
                status: *status,
            }
            .run(step)
            .await
        }
        Action::CloudLatency { latency, duration } => {
            latency::Latency {
                latency,
                duration: *duration,
            }
            .run(step)
            .await
        }
        Action::CloudFault { duration, .. } => {
            fault::Fault {
                duration: *duration,
            }
            .run(step)
            .await
        }
        Action::CompositionUpdate(_) | Action::FunctionFault { .. } => {
            core_phase::CorePhase.run(step).await
        }
        Action::Restart => restart::Restart.run(step).await,
        Action::Kill { .. } => kill_phase::KillPhase.run(step).await,
        Action::Delete { rate, groups } => {
            delete::Delete {
                rate: *rate,
                groups,
            }
            .run(step)
            .await
        }
    }
}

#[cfg(test)]
mod tests;
