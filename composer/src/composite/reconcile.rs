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
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject, ListParams, PostParams};
use limiter::controller::Request;
use limiter::crossplane::circuit::Responsive;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::compose::result_events;
use super::conditions::{
    deleting, mark, mark_unseen_unknown, reconcile_error, reconcile_success, responsive_condition,
    set_function_conditions,
};
use super::events::{
    REASON_COMPOSE, REASON_COMPOSITION_SELECTION, REASON_DELETE, REASON_INIT,
    REASON_RECONCILE_REQUEST_HANDLED, REASON_SELECT_COMPOSITION, Recorder,
};
use super::{
    Cache, ComposeError, Composer, LABEL_COMPOSITE, Machinery, RECONCILE_REQUESTED_AT_ANNOTATION,
    Realtime, Requeue, RequeueSettings, RevisionError, SelectError, fetch_revision, requeue,
    select_composition,
};
use crate::api::{CompositeResourceDefinition, Composition, CompositionRevision};
use crate::function::pipeline::PipelineError;

/// The XR finalizer core adds.
pub const FINALIZER: &str = "composite.apiextensions.crossplane.io";
/// Core's deadline for one reconcile.
pub const RECONCILE_TIMEOUT: Duration = Duration::from_secs(120);
/// Core's deadline for the status Update after a failure (`timeoutUpdate`: the reconcile's
/// deadline and 20 seconds more, from the reconcile's start).
pub const UPDATE_TIMEOUT: Duration = Duration::from_secs(140);

/// Why a reconcile failed (the queue backs the XR off). Each displays as core's error
/// does, which is the message of the XR's `Synced` condition.
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// An API request failed.
    #[error("cannot {action}")]
    Api {
        /// What was being done.
        action: &'static str,
        /// The client's error.
        #[source]
        source: kube::Error,
    },
    /// No Composition could be selected.
    #[error("cannot select Composition")]
    Select(#[source] SelectError),
    /// No usable revision.
    #[error("cannot fetch Composition")]
    Revision(#[source] RevisionError),
    /// The revision's pipeline is not valid (core does not wrap this error).
    #[error(transparent)]
    InvalidPipeline(RevisionError),
    /// Composing failed.
    #[error("cannot compose resources")]
    Compose(#[source] ComposeError),
    /// The XR does not read.
    #[error("cannot read the XR's spec.crossplane")]
    Machinery(#[source] serde_json::Error),
    /// The reconcile's deadline ([`RECONCILE_TIMEOUT`]) passed: whatever request or call
    /// was in flight was abandoned, as Go's context cancels it.
    #[error("context deadline exceeded after {0:?}")]
    DeadlineExceeded(Duration),
}

fn api(action: &'static str) -> impl FnOnce(kube::Error) -> ReconcileError {
    move |source| ReconcileError::Api { action, source }
}

/// An error's message as Go's wrapped errors print: each cause after `: `; an API server's
/// refusal is its `Status` message, as client-go's `StatusError` prints.
#[must_use]
pub fn error_message(error: &(dyn std::error::Error + 'static)) -> String {
    if let Some(kube::Error::Api(status)) = error.downcast_ref::<kube::Error>() {
        return status.message.clone();
    }
    let mut message = error.to_string();
    if let Some(source) = error.source() {
        message.push_str(": ");
        message.push_str(&error_message(source));
    }
    message
}

fn is_conflict(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(s) if s.code == 409)
}

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
        }
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
    ///   the status Update only when `.status` changed; the requeue of [`requeue`].
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
        mark(&mut xr, &[reconcile_error(message)]);
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

    #[expect(
        clippy::too_many_lines,
        reason = "core's Reconcile is one long sequence"
    )]
    async fn reconcile_by(
        &self,
        namespace: Option<&str>,
        name: &str,
        u: f64,
        deadline: Instant,
        in_flight: &InFlight,
    ) -> Result<Requeue, ReconcileError> {
        let xrs = self.xrs(namespace);
        let read = match &self.cache {
            Some(cache) => cache.get_synced(&self.resource, namespace, name).await,
            None => xrs
                .get_opt(name)
                .await
                .map_err(api("get composite resource"))?,
        };
        let Some(mut xr) = read else {
            return Ok(Requeue::Never);
        };
        let status_before = xr.data.get("status").cloned();
        let request = Request::new(namespace.unwrap_or_default(), name);

        // The breaker's condition (closed when there is no breaker, as core's is).
        let responsive = self.realtime.as_ref().map_or_else(
            || Responsive {
                status: true,
                reason: limiter::crossplane::circuit::REASON_WATCH_CIRCUIT_CLOSED,
                message: String::new(),
            },
            |r| r.responsive(Instant::now(), &request),
        );
        mark(&mut xr, &[responsive_condition(&responsive)]);

        // A new reconcile-request token: an event, and the token on the status held.
        let token = xr
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(RECONCILE_REQUESTED_AT_ANNOTATION))
            .filter(|t| !t.is_empty())
            .cloned();
        if let Some(token) = token {
            let handled = xr
                .data
                .pointer("/status/lastHandledReconcileAt")
                .and_then(Value::as_str);
            if handled != Some(token.as_str()) {
                self.events.normal(
                    &xr,
                    REASON_RECONCILE_REQUEST_HANDLED,
                    "Handling reconcile request",
                );
                if !xr.data["status"].is_object() {
                    xr.data["status"] = json!({});
                }
                xr.data["status"]["lastHandledReconcileAt"] = json!(token);
            }
        }

        if xr.metadata.deletion_timestamp.is_some() {
            mark(&mut xr, &[deleting()]);
            let finalizers = xr.metadata.finalizers.get_or_insert_with(Vec::new);
            if finalizers.iter().any(|f| f == FINALIZER) {
                finalizers.retain(|f| f != FINALIZER);
                match xrs.replace(name, &PostParams::default(), &xr).await {
                    Ok(updated) => xr = updated,
                    Err(kube::Error::Api(s)) if s.code == 404 => {}
                    Err(e) if is_conflict(&e) => return Ok(Requeue::Backoff),
                    Err(e) => {
                        let failure = Failure {
                            xr,
                            reason: REASON_DELETE,
                            error: api("remove composite resource finalizer")(e),
                        };
                        return Err(self.fail(namespace, failure).await);
                    }
                }
            }
            mark(&mut xr, &[reconcile_success()]);
            self.put_status(namespace, name, &xr)
                .await
                .map_err(api("update composite resource status"))?;
            return Ok(Requeue::Never);
        }

        let finalizers = xr.metadata.finalizers.get_or_insert_with(Vec::new);
        if !finalizers.iter().any(|f| f == FINALIZER) {
            finalizers.push(FINALIZER.to_owned());
            match xrs.replace(name, &PostParams::default(), &xr).await {
                Ok(updated) => xr = updated,
                Err(e) if is_conflict(&e) => return Ok(Requeue::Backoff),
                Err(e) => {
                    let failure = Failure {
                        xr,
                        reason: REASON_INIT,
                        error: api("add composite resource finalizer")(e),
                    };
                    return Err(self.fail(namespace, failure).await);
                }
            }
        }

        let fail_select = |xr: DynamicObject, error: ReconcileError| Failure {
            xr,
            reason: REASON_SELECT_COMPOSITION,
            error,
        };
        let compositions: Vec<Composition> = match self.list().await {
            Ok(list) => list,
            Err(e) => {
                let failure = fail_select(xr, api("list Compositions")(e));
                return Err(self.fail(namespace, failure).await);
            }
        };
        let mut machinery = match Machinery::read(&xr.data) {
            Ok(m) => m,
            Err(e) => {
                let failure = fail_select(xr, ReconcileError::Machinery(e));
                return Err(self.fail(namespace, failure).await);
            }
        };
        let original = machinery.composition_ref.clone();
        let selection = match select_composition(
            &self.resource.api_version,
            &self.resource.kind,
            &mut machinery,
            &self.xrd,
            &compositions,
            |n| rand::random_range(0..n),
        ) {
            Ok(selection) => selection,
            Err(e) => {
                let failure = fail_select(xr, ReconcileError::Select(e));
                return Err(self.fail(namespace, failure).await);
            }
        };
        for message in &selection.events {
            self.events
                .normal(&xr, REASON_COMPOSITION_SELECTION, *message);
        }
        if selection.update {
            xr = match self.update_machinery(&xrs, xr.clone(), &machinery).await {
                Ok(updated) => updated,
                Err(e) if is_conflict(&e) => return Ok(Requeue::Backoff),
                Err(e) => {
                    let failure = fail_select(xr, api("update composite resource")(e));
                    return Err(self.fail(namespace, failure).await);
                }
            };
        }
        if let Some(selected) = &machinery.composition_ref
            && original.as_ref() != Some(selected)
        {
            self.events.normal(
                &xr,
                REASON_SELECT_COMPOSITION,
                format!("Successfully selected composition: {}", selected.name),
            );
        }

        let composition_name = machinery
            .composition_ref
            .as_ref()
            .map(|r| r.name.clone())
            .unwrap_or_default();
        let fail_compose = |xr: DynamicObject, error: ReconcileError| Failure {
            xr,
            reason: REASON_COMPOSE,
            error,
        };
        let Some(composition) = compositions
            .iter()
            .find(|c| c.metadata.name.as_deref() == Some(composition_name.as_str()))
        else {
            let error = ReconcileError::Select(SelectError::NoCompatibleComposition);
            return Err(self.fail(namespace, fail_select(xr, error)).await);
        };
        let revisions: Vec<CompositionRevision> = match self.list().await {
            Ok(list) => list,
            Err(e) => {
                let failure = fail_compose(xr, api("list CompositionRevisions")(e));
                return Err(self.fail(namespace, failure).await);
            }
        };
        let original_revision = machinery.composition_revision_ref.clone();
        let revision = match fetch_revision(&mut machinery, composition, &revisions) {
            Ok(pick) => {
                if pick.update {
                    xr = match self.update_machinery(&xrs, xr.clone(), &machinery).await {
                        Ok(updated) => updated,
                        Err(e) if is_conflict(&e) => return Ok(Requeue::Backoff),
                        Err(e) => {
                            let failure = fail_compose(xr, api("update composite resource")(e));
                            return Err(self.fail(namespace, failure).await);
                        }
                    };
                }
                pick.revision
            }
            Err(error @ RevisionError::InvalidPipeline { .. }) => {
                self.note_revision(&xr, original_revision.as_ref(), &machinery);
                let failure = fail_compose(xr, ReconcileError::InvalidPipeline(error));
                return Err(self.fail(namespace, failure).await);
            }
            Err(error) => {
                let failure = fail_compose(xr, ReconcileError::Revision(error));
                return Err(self.fail(namespace, failure).await);
            }
        };
        self.note_revision(&xr, original_revision.as_ref(), &machinery);

        let labels = xr.metadata.labels.get_or_insert_with(Default::default);
        if labels.get(LABEL_COMPOSITE).is_none_or(String::is_empty) {
            labels.insert(LABEL_COMPOSITE.to_owned(), name.to_owned());
            match xrs.replace(name, &PostParams::default(), &xr).await {
                Ok(updated) => xr = updated,
                Err(e) if is_conflict(&e) => return Ok(Requeue::Backoff),
                Err(e) => {
                    let failure = fail_compose(xr, api("update composite resource")(e));
                    return Err(self.fail(namespace, failure).await);
                }
            }
        }

        *in_flight.lock().expect("not poisoned") = Some((xr.clone(), REASON_COMPOSE));
        let composed = match self
            .composer
            .compose(&xr, &self.resource, revision, deadline)
            .await
        {
            Ok(composed) => composed,
            Err(ComposeError::Api { source, .. }) if is_conflict(&source) => {
                in_flight.lock().expect("not poisoned").take();
                return Ok(Requeue::Backoff);
            }
            Err(e) => {
                in_flight.lock().expect("not poisoned").take();
                // Core: the warning and Synced=False, then what the functions returned
                // before failing (their results' events, their conditions), then every
                // custom condition they did not return marked Unknown.
                let error = ReconcileError::Compose(e);
                let message = error_message(&error);
                self.events.warning(&xr, REASON_COMPOSE, message.clone());
                mark(&mut xr, &[reconcile_error(message)]);
                let mut seen = Vec::new();
                if let ReconcileError::Compose(ComposeError::Pipeline(PipelineError::Fatal {
                    results,
                    conditions,
                    ..
                })) = &error
                {
                    for (type_, reason, message) in result_events(results) {
                        self.events.record(&xr, type_, &reason, message);
                    }
                    seen = set_function_conditions(&mut xr, conditions);
                }
                mark_unseen_unknown(&mut xr, &seen);
                let _ = self.put_status(namespace, name, &xr).await;
                return Err(error);
            }
        };
        in_flight.lock().expect("not poisoned").take();
        let mut xr = composed.xr.clone();
        for (type_, reason, message) in &composed.events {
            self.events.record(&xr, *type_, reason, message.clone());
        }
        set_function_conditions(&mut xr, &composed.conditions);
        for message in &composed.outcome.events {
            self.events.normal(&xr, REASON_COMPOSE, message.clone());
        }
        mark(&mut xr, &composed.outcome.conditions);

        let annotation = xr
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(limiter::crossplane::POLL_INTERVAL_ANNOTATION))
            .map(String::as_str);
        let result = requeue(
            self.settings,
            annotation,
            composed.outcome.waiting,
            composed.ttl.unwrap_or_default(),
            u,
        );
        if xr.data.get("status") != status_before.as_ref() {
            self.put_status(namespace, name, &xr)
                .await
                .map_err(api("update composite resource status"))?;
        }
        Ok(result)
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
