//! One XR reconcile against an API server, in core's order: finalizer, Composition,
//! revision, label, compose, requeue, and the status Update only when `.status` changed.
//!
//! Follows crossplane/crossplane's `composite/reconciler.go` (`Reconcile`, v2.3): the XR is
//! read, its `status` copied; the `Responsive` condition and a new reconcile-request token
//! are set on the XR held in memory; each step that fails records a warning event, marks
//! `Synced=False` (`ReconcileError`, the error's message) and writes the status with an
//! Update before returning the error; a conflict requeues with backoff and no error. After
//! composing, `Synced` and `Ready` are marked on the XR the status apply returned, and the
//! status Update is sent only when that status differs from the one read. With
//! [`Reconciler::with_cache`] the XR, Compositions and revisions are read from the watches'
//! cache, as core reads them from its informers (a steady reconcile is then N+2 applies and
//! nothing else); without one they are read live (one XR GET and two LISTs more).
//! Difference: no pause annotation.

mod error;
mod steps;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject, ListParams, PostParams};
use limiter::controller::Request;
use provider::reconciler::Draws;
use provider::reconciler::meta::Clock;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::conditions::{mark, reconcile_error};
use super::events::{REASON_SELECT_COMPOSITION, Recorder};
use super::{Cache, Composer, Machinery, Realtime, Requeue, RequeueSettings};
use crate::api::CompositeResourceDefinition;

/// The XR finalizer core adds.
pub const FINALIZER: &str = "composite.apiextensions.crossplane.io";
/// Core's deadline for one reconcile.
pub const RECONCILE_TIMEOUT: Duration = Duration::from_secs(120);
/// Core's deadline for the status Update after a failure (`timeoutUpdate`: the reconcile's
/// deadline and 20 seconds more, from the reconcile's start).
pub const UPDATE_TIMEOUT: Duration = Duration::from_secs(140);

pub use self::error::{ReconcileError, error_message};

/// Reconciles the XRs of one XRD.
pub struct Reconciler {
    client: kube::Client,
    xrd: CompositeResourceDefinition,
    resource: ApiResource,
    composer: Composer,
    settings: RequeueSettings,
    realtime: Option<Arc<Realtime>>,
    events: Recorder,
    cache: Option<Cache>,
    /// Dates the conditions it marks: the system time when the reconciler was made,
    /// advancing with tokio time (virtual time on a paused clock).
    clock: Clock,
    /// Picks among the Compositions a selector matches.
    draws: Arc<Draws>,
}

/// Where a failing step leaves the reconcile: the XR to write the error on, and the
/// reason of the warning event.
struct Failure {
    xr: DynamicObject,
    reason: &'static str,
    error: ReconcileError,
}

/// What core's error reads when the deadline cancels a compose: the call in flight fails
/// with Go's `context.DeadlineExceeded`, wrapped as the compose wraps it.
const COMPOSE_DEADLINE_MESSAGE: &str = "cannot compose resources: context deadline exceeded";

/// The XR as the reconcile holds it, for the error path of a reconcile whose deadline
/// passed.
type InFlight = Arc<Mutex<Option<(DynamicObject, &'static str)>>>;

impl Reconciler {
    /// A reconciler of `xrd`'s XRs (`resource` is their API resource), composing with
    /// `composer`.
    #[must_use]
    pub fn new(
        client: kube::Client,
        xrd: CompositeResourceDefinition,
        resource: ApiResource,
        composer: Composer,
        settings: RequeueSettings,
    ) -> Self {
        Self {
            client,
            xrd,
            resource,
            composer,
            settings,
            realtime: None,
            events: Recorder::nop(),
            cache: None,
            clock: Clock::new(),
            draws: Arc::new(Draws::from_os()),
        }
    }

    /// Picks among the Compositions a selector matches with `draws` (seeded by the
    /// operating system by default, as core's `rand.Intn` is): a seeded source repeats the
    /// picks.
    #[must_use]
    pub fn with_draws(mut self, draws: Arc<Draws>) -> Self {
        self.draws = draws;
        self
    }

    /// Reads the XR, Compositions and CompositionRevisions from `cache`, as core's
    /// reconciler reads them through controller-runtime's cached client: each read waits
    /// until its kind's watch has synced, and a missing XR is done, with no live read. The
    /// caller starts those watches once for the controller, into the same cache:
    /// [`super::watch_cached`] on the XR kind, [`super::watch_compositions`] and
    /// [`super::watch_revisions_cached`]. Without a cache they are read live.
    #[must_use]
    pub fn with_cache(mut self, cache: Cache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Records events through `events` (none by default, as core's default recorder).
    #[must_use]
    pub fn with_events(mut self, events: Recorder) -> Self {
        self.events = events;
        self
    }

    /// Shows the `Responsive` condition of `realtime`'s breaker on each XR.
    #[must_use]
    pub fn with_realtime(mut self, realtime: Arc<Realtime>) -> Self {
        self.realtime = Some(realtime);
        self
    }

    fn xrs(&self, namespace: Option<&str>) -> Api<DynamicObject> {
        match namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &self.resource),
            None => Api::all_with(self.client.clone(), &self.resource),
        }
    }

    /// Reconciles the XR `name` (in `namespace` for a Namespaced XR); `u` is a uniform draw
    /// in `[0, 1)` for the requeue's jitter.
    ///
    /// # Semantics
    /// - A missing XR is done. A deleting XR is marked `Ready=False` (`Deleting`), loses its
    ///   finalizer (an Update), is marked `Synced=True` and its status written with an
    ///   Update, which fails with NotFound when the XR is gone (core returns that error
    ///   too); its composed resources go by the API server's garbage collector.
    /// - The finalizer, a newly selected Composition, a changed revision reference and the
    ///   `crossplane.io/composite` label are each one XR Update, sent only when needed; each
    ///   Update's answer replaces the XR held (dropping what was set on its status).
    /// - Then one compose ([`Composer::compose`]); `Synced` and `Ready` from its outcome;
    ///   the status Update only when `.status` changed; the requeue of
    ///   [`requeue`](super::requeue).
    /// - A failing step: a warning event, `Synced=False` with `ReconcileError` and the
    ///   error's message, the status Update (its own failure ignored), and the error; a
    ///   conflict instead requeues with backoff ([`Requeue::Backoff`]) and no error.
    /// - Events: `ReconcileRequestHandled` for a new reconcile-request token,
    ///   `CompositionSelection` and `SelectComposition` when a Composition or revision is
    ///   selected, one per function result, one per unsynced or unready resource.
    /// - The whole reconcile, every request and function call, runs under core's 2-minute
    ///   deadline: when it passes, what is in flight is abandoned and the reconcile fails
    ///   ([`ReconcileError::DeadlineExceeded`]), as Go's context timeout does
    ///   (crossplane#6240: sequential applies after a slow function); the failure is
    ///   written on the XR by [`UPDATE_TIMEOUT`], as core's `updateCtx` allows.
    /// - With the breaker's [`limiter::crossplane::circuit::Mode::EagerClose`], an XR whose
    ///   circuit is open is requeued by [`Realtime::requeue_while_open`] at the latest.
    ///
    /// # Errors
    /// [`ReconcileError`]; the caller backs the XR off.
    pub async fn reconcile(
        &self,
        namespace: Option<&str>,
        name: &str,
        u: f64,
    ) -> Result<Requeue, ReconcileError> {
        let started = Instant::now();
        let deadline = started + RECONCILE_TIMEOUT;
        let in_flight: InFlight = Arc::default();
        let result = tokio::time::timeout_at(
            deadline,
            self.reconcile_by(namespace, name, u, deadline, &in_flight),
        )
        .await;
        let requeue = match result {
            Ok(result) => result?,
            Err(_) => {
                let error = ReconcileError::DeadlineExceeded(started.elapsed());
                let held = in_flight.lock().expect("not poisoned").take();
                if let Some((mut xr, reason)) = held {
                    // Core's error path runs on: a warning, Synced=False, and the status
                    // Update within `timeoutUpdate` of the start.
                    self.events.warning(&xr, reason, COMPOSE_DEADLINE_MESSAGE);
                    mark(
                        &mut xr,
                        &[reconcile_error(COMPOSE_DEADLINE_MESSAGE.to_owned())],
                        &self.clock,
                    );
                    let _ = tokio::time::timeout_at(
                        started + UPDATE_TIMEOUT,
                        self.put_status(namespace, name, &xr),
                    )
                    .await;
                }
                return Err(error);
            }
        };
        let open = self.realtime.as_ref().and_then(|r| {
            r.requeue_while_open(
                Instant::now(),
                &Request::new(namespace.unwrap_or_default(), name),
            )
        });
        Ok(match (requeue, open) {
            (Requeue::Never, Some(wait)) => Requeue::After(wait),
            (Requeue::After(after), Some(wait)) => Requeue::After(after.min(wait)),
            (requeue, _) => requeue,
        })
    }

    /// Records the failure's warning, marks `Synced=False` and writes the status, ignoring
    /// that write's own failure; returns the error.
    async fn fail(&self, namespace: Option<&str>, failure: Failure) -> ReconcileError {
        let Failure {
            mut xr,
            reason,
            error,
        } = failure;
        let message = error_message(&error);
        self.events.warning(&xr, reason, message.clone());
        mark(&mut xr, &[reconcile_error(message)], &self.clock);
        let name = xr.metadata.name.clone().unwrap_or_default();
        let _ = self.put_status(namespace, &name, &xr).await;
        error
    }

    /// The status Update (`client.Status().Update`): a PUT of the whole XR to `/status`.
    async fn put_status(
        &self,
        namespace: Option<&str>,
        name: &str,
        xr: &DynamicObject,
    ) -> Result<DynamicObject, kube::Error> {
        self.xrs(namespace)
            .replace_status(name, &PostParams::default(), xr)
            .await
    }

    /// Every `K` (Compositions or CompositionRevisions): from the cache when there is one,
    /// else with a live LIST.
    async fn list<K>(&self) -> Result<Vec<K>, kube::Error>
    where
        K: kube::Resource<DynamicType = ()>
            + Clone
            + std::fmt::Debug
            + serde::de::DeserializeOwned
            + serde::Serialize,
    {
        match &self.cache {
            Some(cache) => cache
                .list_synced(&ApiResource::erase::<K>(&()))
                .await
                .into_iter()
                .map(|object| {
                    serde_json::to_value(object)
                        .and_then(serde_json::from_value)
                        .map_err(kube::Error::SerdeError)
                })
                .collect(),
            None => Ok(Api::<K>::all(self.client.clone())
                .list(&ListParams::default())
                .await?
                .items),
        }
    }

    /// `Selected composition revision: <name>` when the XR's revision reference changed.
    fn note_revision(
        &self,
        xr: &DynamicObject,
        original: Option<&super::NameRef>,
        machinery: &Machinery,
    ) {
        if let Some(selected) = &machinery.composition_revision_ref
            && original != Some(selected)
        {
            self.events.normal(
                xr,
                REASON_SELECT_COMPOSITION,
                format!("Selected composition revision: {}", selected.name),
            );
        }
    }

    async fn update_machinery(
        &self,
        xrs: &Api<DynamicObject>,
        mut xr: DynamicObject,
        machinery: &Machinery,
    ) -> Result<DynamicObject, kube::Error> {
        let mut data = std::mem::replace(&mut xr.data, json!({}));
        if !data.is_object() {
            data = Value::Object(Default::default());
        }
        machinery.write(&mut data);
        xr.data = data;
        let name = xr.metadata.name.clone().unwrap_or_default();
        xrs.replace(&name, &PostParams::default(), &xr).await
    }
}
