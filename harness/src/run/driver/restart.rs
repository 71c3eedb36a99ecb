//! `restart`: the provider restarted, then the wait until the new one has observed (a cloud
//! read) every live resource, which is when its re-list backlog has drained.

use std::collections::HashMap;
use std::time::Duration;

use tokio::time::Instant;

use super::log::PhaseEnd;
use super::phase::{PhaseAction, Step};
use super::state::State;
use crate::result::CallAction;
use crate::run::error::RunError;
use crate::run::objects::kind_of_collection;
use crate::run::progress::PhaseBar;
use crate::run::source::cloud_journal::action_of;
use crate::run::source::hook::PhaseHook;
use crate::run::source::watches::Watches;
use crate::run::target::{CloudControl, Target};

/// Restarts the provider.
pub struct Restart;

impl PhaseAction for Restart {
    async fn run<T: Target, H: PhaseHook>(
        &self,
        step: Step<'_, '_, T, H>,
    ) -> Result<PhaseEnd, RunError> {
        let from = match step.target.cloud().next_seq().await {
            Ok(seq) => seq,
            Err(e) => {
                tracing::error!(error = %e, "cannot read the cloud's journal");
                0
            }
        };
        step.target.restart_provider(step.deadline).await?;
        let observed = wait_observed(
            step.state,
            step.target.cloud(),
            step.watches,
            from,
            step.deadline,
            step.bar,
        )
        .await;
        Ok(PhaseEnd::met(observed))
    }
}

/// After a restart: waits until the new provider has observed (a cloud read) every live
/// resource, reading mock-cloud's journal from `from` on.
///
/// A read of the generic API names its collection, so it observes that kind's resource
/// of the name; an AWS read names a bucket or a VPC and no kind, so it observes the
/// resources of any other kind whose external name (as the watches last saw it, else
/// the resource's name) it is, as `poll` matches calls to resources.
async fn wait_observed(
    state: &State<'_>,
    cloud: &impl CloudControl,
    watches: &Watches,
    from: u64,
    deadline: Instant,
    bar: &PhaseBar,
) -> bool {
    // (kind for the sample provider's kinds, name in the cloud) → resources waiting.
    let mut missing: HashMap<(Option<String>, String), usize> = HashMap::new();
    {
        let seen = watches.lock();
        for ((g, _), r) in state.log.records.iter().filter(|(_, r)| r.is_live()) {
            let key = if state.scenario.groups[*g].kind.collection().is_some() {
                (Some(r.kind.clone()), r.name.clone())
            } else {
                let external = seen
                    .get(&(r.kind.clone(), r.name.clone()))
                    .and_then(|s| s.external_name.clone());
                (None, external.unwrap_or_else(|| r.name.clone()))
            };
            *missing.entry(key).or_default() += 1;
        }
    }
    let total: usize = missing.values().sum();
    let mut left = total;
    bar.set_total(total);
    let mut cursor = from;
    loop {
        let calls = match cloud.calls_since(cursor).await {
            Ok(page) => page.calls,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the cloud's journal; retrying");
                Vec::new()
            }
        };
        for call in calls {
            cursor = call.seq + 1;
            if action_of(&call) != Some(CallAction::Get) {
                continue;
            }
            let kind = call
                .collection
                .and_then(kind_of_collection)
                .map(str::to_owned);
            if let Some(n) = missing.remove(&(kind, call.name)) {
                left -= n;
            }
        }
        bar.set(total - left);
        if left == 0 {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::select! {
            () = tokio::time::sleep_until(deadline) => {}
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
    }
}
