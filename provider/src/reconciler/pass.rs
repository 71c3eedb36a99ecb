//! One reconcile's working copy of a managed resource and the writes made to it.

use std::time::Duration;

use kube::api::{Api, PostParams};
use std::sync::Arc;

use kube::ResourceExt;
use limiter::controller::{Action, ReconcileError, ReconcileResult};

use super::external::Observation;
use super::{Context, ReadYourWrites};
use crate::crd::{Condition, Managed};

/// The critical annotation updater's attempts and their spacing (client-go's
/// `retry.DefaultRetry`: 5 steps of 10 ms, jitter 0.1).
const CRITICAL_TRIES: usize = 5;
const CRITICAL_STEP: Duration = Duration::from_millis(10);

/// Whether a Kubernetes error is a 409 Conflict.
#[must_use]
pub fn is_conflict(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 409)
}

/// The working copy. Every write adopts the object the API server returned, status
/// included, as crossplane-runtime does.
pub struct Pass<K: Managed> {
    pub(super) ctx: Arc<Context>,
    pub(super) cache: Arc<ReadYourWrites<K>>,
    pub(super) mr: K,
    /// A new `reconcile-requested-at` token, recorded by the next status write.
    pub(super) token: Option<String>,
    /// What Observe found, applied to the status at the next status write.
    pub(super) observed: Option<Observation<K::AtProvider>>,
}

impl<K: Managed> Pass<K> {
    fn api(&self) -> Api<K> {
        let namespace = self.mr.namespace().unwrap_or_default();
        K::api(self.ctx.client.clone(), &namespace)
    }

    /// PUT the whole object and adopt the answer.
    pub async fn put(&mut self) -> Result<(), kube::Error> {
        let (api, name, params) = (self.api(), self.mr.name_any(), PostParams::default());
        let written = api.replace(&name, &params, &self.mr).await?;
        self.cache.remember(&written);
        self.mr = written;
        Ok(())
    }

    /// crossplane-runtime's `RetryingCriticalAnnotationUpdater`: PUT with `annotations` set,
    /// up to five tries 10 ms apart; after a failure, re-read the object (cache first) and
    /// re-apply the annotations.
    pub async fn put_critical(
        &mut self,
        annotations: &[(&'static str, String)],
    ) -> Result<(), kube::Error> {
        let mut last = None;
        for attempt in 0..CRITICAL_TRIES {
            if attempt > 0 {
                let jitter = self.ctx.draws.unit() * 0.1;
                tokio::time::sleep(CRITICAL_STEP.mul_f64(1.0 + jitter)).await;
                let namespace = self.mr.namespace().unwrap_or_default();
                if let Some(fresh) = self.cache.get(&namespace, &self.mr.name_any()) {
                    self.mr = fresh;
                }
            }
            let map = self.mr.annotations_mut();
            for (key, value) in annotations {
                map.insert((*key).to_owned(), value.clone());
            }
            match self.put().await {
                Ok(()) => return Ok(()),
                Err(error) => {
                    tracing::debug!(attempt, %error, "critical annotation update failed");
                    last = Some(error);
                }
            }
        }
        Err(last.expect("at least one attempt was made"))
    }

    /// Sets `conditions` (stamped with the generation and, if they changed, the time), the
    /// observation and any new token on the status, and PUTs it. This is the last API call
    /// of every path that has one.
    pub async fn put_status(&mut self, conditions: &[Condition]) -> Result<(), kube::Error> {
        let generation = self.mr.meta().generation;
        let now = self.ctx.clock.stamp();
        let token = self.token.clone();
        let observed = self.observed.clone();
        let status = self.mr.managed_status_mut();
        if let Some(token) = token {
            status.last_handled_reconcile_at = Some(token);
        }
        if let Some(observed) = observed {
            if let Some(at_provider) = observed.at_provider {
                status.at_provider = Some(at_provider);
            }
            if let Some(ready) = observed.ready {
                status.set_condition(stamp(ready, generation, &now));
            }
        }
        for c in conditions {
            status.set_condition(stamp(c.clone(), generation, &now));
        }
        let (api, name, params) = (self.api(), self.mr.name_any(), PostParams::default());
        let written = api.replace_status(&name, &params, &self.mr).await?;
        self.cache.remember(&written);
        self.mr = written;
        Ok(())
    }

    /// Writes the status and ends the reconcile with `action`; a 409 becomes a silent
    /// rate-limited requeue, any other failure an error (both per-item backoff).
    pub async fn finish(&mut self, conditions: &[Condition], action: Action) -> ReconcileResult {
        match self.put_status(conditions).await {
            Ok(()) => Ok(action),
            Err(error) if is_conflict(&error) => Ok(Action::requeue()),
            Err(error) => Err(ReconcileError::new(error)),
        }
    }
}

fn stamp(mut c: Condition, generation: Option<i64>, now: &str) -> Condition {
    c.observed_generation = generation;
    now.clone_into(&mut c.last_transition_time);
    c
}
