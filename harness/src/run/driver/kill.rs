//! `kill`: when the kills fall (drawn from the scenario's seed), the kills themselves during
//! the phase they interrupt (beside that phase's writes and wait), each told to the
//! sources' phase hook before a new provider starts, and the kill phase, which counts them.

use std::time::Duration;

use tokio::time::Instant;

use crate::result::Kill;
use crate::run::clock::RunClock;
use crate::run::error::RunError;
use crate::run::source::hook::PhaseHook;
use crate::run::target::Target;
use crate::scenario::Scenario;

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
