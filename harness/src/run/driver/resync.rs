//! `resync`: the live resources of the groups asked to reconcile (a fresh token in
//! `crossplane.io/reconcile-requested-at`), at the phase's rate; a phase that waits until
//! they are all handled and has a `handledGrace` stops early with a verdict when the
//! provider reconciles them without recording the token ([`NotHandled`]).

use std::time::Duration;

use limiter::crossplane::RECONCILE_REQUESTED_AT_ANNOTATION;
use serde_json::json;

use super::phase::PhaseAction;
use super::state::State;
use super::wait::Waiting;
use crate::run::handled::NotHandled;
use crate::run::target::CloudControl;
use crate::scenario::{Phase, Until};

/// Asks the resources of `groups` to reconcile.
pub struct Resync<'a> {
    /// Resources per second (all at once without).
    pub rate: Option<f64>,
    /// The groups.
    pub groups: &'a [usize],
    /// How long after the first reconcile of a requested resource the phase waits for a
    /// recorded token before it stops with a verdict (`None`: until its timeout).
    pub handled_grace: Option<Duration>,
}

impl PhaseAction for Resync<'_> {
    async fn act(&self, state: &mut State<'_>, phase: &Phase, _cloud: &impl CloudControl) {
        let token = format!("{}-{}", phase.name, state.now_us());
        let body = json!({"metadata": {"annotations": {RECONCILE_REQUESTED_AT_ANNOTATION: token}}});
        let live = state.live(&state.targets(Some(self.groups)));
        let done = state.patch_all(&live, &body, self.rate).await;
        for ((g, i), _, ok) in done {
            if ok {
                state.requested.insert(state.key(g, i), token.clone());
            }
        }
    }

    async fn early_end(
        &self,
        state: &State<'_>,
        phase: &Phase,
        waiting: &Waiting<'_>,
        cloud: &impl CloudControl,
    ) -> Option<NotHandled> {
        let grace = self
            .handled_grace
            .filter(|_| phase.until == Until::AllHandled)?;
        not_handled(state, cloud, waiting, grace).await
    }
}

/// After a resync phase's writes: what to watch for a provider that reconciles the
/// requested resources without recording the token (their cloud names, the journal from
/// now on). `None` when the cloud's journal cannot be read.
async fn not_handled(
    state: &State<'_>,
    cloud: &impl CloudControl,
    waiting: &Waiting<'_>,
    grace: Duration,
) -> Option<NotHandled> {
    let from = match cloud.next_seq().await {
        Ok(seq) => seq,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the cloud's journal: a provider that does not record reconcile requests is found only by the phase's timeout");
            return None;
        }
    };
    let seen = waiting.watches.lock();
    let names = waiting
        .targets
        .iter()
        .map(|&(g, i)| state.key(g, i))
        .filter(|key| state.requested.contains_key(key))
        .map(|key| {
            seen.get(&key)
                .and_then(|s| s.external_name.clone())
                .unwrap_or(key.1)
        })
        .collect();
    Some(NotHandled::new(names, from, grace))
}
