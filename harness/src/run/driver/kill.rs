//! `kill`: when the kills fall (drawn from the scenario's seed), the kills themselves during
//! the phase they interrupt (beside that phase's writes and wait), each told to the
//! sources' phase hook before a new provider starts, and the kill phase, which counts them.

use std::time::Duration;

use tokio::time::Instant;

use super::log::PhaseEnd;
use super::phase::{PhaseAction, Step};
use super::state::State;
use super::wait::Waiting;
use crate::result::Kill;
use crate::run::clock::RunClock;
use crate::run::error::RunError;
use crate::run::source::hook::PhaseHook;
use crate::run::target::Target;
use crate::scenario::{Phase, Scenario};

/// The kill phase: its kills ran during the phase they interrupt; it counts them.
pub(crate) struct KillPhase;

impl PhaseAction for KillPhase {
    async fn run<T: Target, H: PhaseHook>(
        &self,
        step: Step<'_, '_, T, H>,
    ) -> Result<PhaseEnd, RunError> {
        let n = step
            .state
            .log
            .kills
            .iter()
            .filter(|k| k.kill_phase == step.phase.name)
            .count();
        step.bar.set_total(n);
        step.bar.set(n);
        Ok(PhaseEnd::Completed)
    }
}

/// `action`'s writes, its phase's XR groups' writes and its wait while the kills of `plan`
/// fall (`hook` told of each); then, since kills after the work was done undo it, the wait
/// again, and the wait for the phase's XRs (as a phase without kills waits for them).
///
/// # Errors
/// The target could not kill or start the provider.
pub(crate) async fn beside<A: PhaseAction + ?Sized, T: Target>(
    action: &A,
    state: &mut State<'_>,
    phase: &Phase,
    (target, hook): (&T, &mut impl PhaseHook),
    waiting: &Waiting<'_>,
    plan: &[(usize, Duration)],
) -> Result<PhaseEnd, RunError> {
    let cx = KillContext {
        scenario: state.scenario,
        clock: state.clock,
        during: &phase.name,
    };
    let killing = kill_loop(target, &cx, plan, (Instant::now(), waiting.deadline), hook);
    let cloud = target.cloud();
    let work = async {
        action.act(state, phase, cloud).await;
        super::xr_groups::act(state, phase).await;
        state.wait_until(waiting, None, cloud).await
    };
    let (done, _) = tokio::join!(killing, work);
    state.log.kills.extend(done?);
    let end = state.wait_until(waiting, None, cloud).await;
    Ok(super::xr_groups::wait(state, phase, waiting, end).await)
}

/// The kills during phase `index`, as (kill phase index, offset from the phase's start),
/// earliest first. Each kill phase draws `count` offsets uniformly in its window from a
/// generator seeded by the scenario's seed and the kill phase's index, so a seed gives the
/// same moments in every run.
#[must_use]
pub fn schedule(s: &Scenario, index: usize) -> Vec<(usize, Duration)> {
    let mut out = Vec::new();
    for (k, count, window) in s.kills_during(index) {
        let mut draws =
            crate::rng::seeded(s.seed ^ (k as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
        for _ in 0..count {
            out.push((k, window.mul_f64(crate::rng::unit(&mut draws))));
        }
    }
    out.sort_by_key(|(_, at)| *at);
    out
}

/// What a kill loop needs besides the target.
pub struct KillContext<'a> {
    /// The scenario.
    pub scenario: &'a Scenario,
    /// The run's clock.
    pub clock: RunClock,
    /// The phase the kills interrupt.
    pub during: &'a str,
}

/// Kills the provider at `start + offset` for each entry of `plan` (skipping those past
/// `deadline`), and lets a new one start. After each kill, before a new provider starts,
/// `hook` is told ([`PhaseHook::provider_killed`]): the audits list the creates the kill
/// interrupted then. The kills' `interrupted_creates` are the audits' to fill.
///
/// # Errors
/// The target could not kill or start the provider.
pub async fn kill_loop<T: Target>(
    target: &T,
    cx: &KillContext<'_>,
    plan: &[(usize, Duration)],
    (start, deadline): (Instant, Instant),
    hook: &mut impl PhaseHook,
) -> Result<Vec<Kill>, RunError> {
    let mut kills = Vec::with_capacity(plan.len());
    for &(k, offset) in plan {
        let at = start + offset;
        if at >= deadline {
            tracing::warn!(
                phase = cx.during,
                "a kill falls past the phase's timeout: skipped"
            );
            continue;
        }
        tokio::time::sleep_until(at).await;
        let at_us = cx.clock.now().0;
        target.kill_provider(deadline).await?;
        hook.provider_killed().await;
        target.revive_provider().await?;
        tracing::info!(phase = cx.during, at_us, "killed the provider");
        kills.push(Kill {
            kill_phase: cx.scenario.phases[k].name.clone(),
            during: cx.during.to_owned(),
            at_us,
            interrupted_creates: Vec::new(),
        });
    }
    Ok(kills)
}
