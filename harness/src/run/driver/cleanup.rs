//! After a cluster run: the managed resources still there deleted, the wait until the
//! provider has let them go, then the seeded objects deleted; and what a clean-up that was
//! stopped leaves behind.

use std::time::Duration;

use kube::api::{Api, DeleteParams, DynamicObject};
use tokio::time::Instant;

use super::Driver;
use crate::run::objects::Seeded;
use crate::run::progress::Progress;
use crate::run::source::watches::{Key, Watches};

/// How often a clean-up without a bar (no terminal) prints where it stands.
const CLEANUP_PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// The time a clean-up that let `done` of `total` resources go in `elapsed` needs for the
/// rest at the same pace; `None` before the first.
#[must_use]
pub fn time_left(done: usize, total: usize, elapsed: Duration) -> Option<Duration> {
    (done > 0).then(|| elapsed.mul_f64(total.saturating_sub(done) as f64 / done as f64))
}

impl Driver<'_> {
    /// After a cluster run: deletes the managed resources still there and waits (at most `timeout`) until the
    /// provider has let them go, then deletes the `seeded` namespace, Secrets and
    /// ProviderConfigs. Returns whether everything was gone in time.
    pub async fn clean_up(
        &mut self,
        seeded: &[Seeded],
        watches: &Watches,
        timeout: Duration,
        progress: &Progress,
    ) -> bool {
        let deadline = Instant::now() + timeout;
        let live: Vec<(usize, u32)> = self
            .state
            .log
            .records
            .iter()
            .filter(|(_, r)| !r.create_failed)
            .map(|(k, _)| *k)
            .collect();
        progress.line(format_args!(
            "cleaning up: deleting {} resources and what the run created (--keep leaves them; Ctrl-C again leaves the rest and lists it)",
            live.len()
        ));
        let s = self.state.scenario;
        self.state
            .paced(&live, None, |g, i| {
                let api = self.state.api(g);
                let name = s.groups[g].resource_name(i, &s.name);
                async move {
                    match api.delete(&name, &DeleteParams::default()).await {
                        Ok(_) => true,
                        Err(kube::Error::Api(e)) if e.code == 404 => true,
                        Err(e) => {
                            tracing::warn!(error = %e, name, "cannot delete");
                            false
                        }
                    }
                }
            })
            .await;
        let keys: Vec<Key> = live.iter().map(|(g, i)| self.state.key(*g, *i)).collect();
        let gone = self.wait_gone(&keys, watches, deadline, progress).await;
        if !gone {
            progress.line(format_args!(
                "cleanup: some resources were still there after {timeout:?}; their finalizers wait for the provider"
            ));
        }
        for seeded in seeded.iter().rev() {
            let api: Api<DynamicObject> = match &seeded.namespace {
                Some(ns) => Api::namespaced_with(self.state.client.clone(), ns, &seeded.resource),
                None => Api::all_with(self.state.client.clone(), &seeded.resource),
            };
            if let Err(e) = api.delete(&seeded.name, &DeleteParams::default()).await {
                tracing::warn!(error = %e, name = seeded.name, "cannot delete");
            }
            self.state.seeded_deleted += 1;
        }
        gone
    }

    /// Waits until the watches see every one of `keys` gone, or `deadline`; whether they
    /// all went.
    async fn wait_gone(
        &self,
        keys: &[Key],
        watches: &Watches,
        deadline: Instant,
        progress: &Progress,
    ) -> bool {
        let bar = progress
            .phase(self.state.log.spans.len(), "cleanup", "delete", keys.len())
            .plain_every(CLEANUP_PROGRESS_EVERY);
        let mut gone = false;
        let waiting = Instant::now();
        while Instant::now() < deadline {
            let left = {
                let seen = watches.lock();
                keys.iter()
                    .filter(|k| seen.get(*k).is_some_and(|s| s.gone_us.is_none()))
                    .count()
            };
            bar.note(
                &match time_left(keys.len() - left, keys.len(), waiting.elapsed()) {
                    Some(eta) => format!("about {:.0}s left", eta.as_secs_f64().ceil()),
                    None => "waiting for the provider to release the first".to_owned(),
                },
            );
            bar.set(keys.len() - left);
            if left == 0 {
                gone = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        bar.finish(gone);
        gone
    }

    /// What a clean-up that was stopped left in the cluster: the managed resources the
    /// watches still see (`KIND NAME`), then the seeded objects it had not deleted yet.
    #[must_use]
    pub fn left_after_cleanup(&self, seeded: &[Seeded], watches: &Watches) -> Vec<String> {
        let seen = watches.lock();
        let mut left: Vec<String> = self
            .state
            .log
            .records
            .iter()
            .filter(|(k, r)| {
                !r.create_failed
                    && seen
                        .get(&self.state.key(k.0, k.1))
                        .is_some_and(|s| s.gone_us.is_none())
            })
            .map(|(_, r)| format!("{} {}", r.kind, r.name))
            .collect();
        drop(seen);
        left.extend(seeded.iter().rev().skip(self.state.seeded_deleted).map(
            |s| match &s.namespace {
                Some(ns) => format!("{} {ns}/{}", s.resource.kind, s.name),
                None => format!("{} {}", s.resource.kind, s.name),
            },
        ));
        left
    }
}
