//! One XR reconcile against an API server, in core's order: finalizer, Composition,
//! revision, label, compose, requeue.
//!
//! Follows crossplane/crossplane's `composite/reconciler.go` (`Reconcile`). Differences:
//! reads are live (core reads the XR, XRD, Compositions and revisions from its cache), so
//! a reconcile here costs more GETs and LISTs than core's; there are no events, no pause
//! annotation and no circuit-breaker condition yet.

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject, ListParams, PostParams};
use limiter::controller::Request;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::{
    ComposeError, Composer, LABEL_COMPOSITE, Machinery, RECONCILE_REQUESTED_AT_ANNOTATION,
    Realtime, Requeue, RequeueSettings, RevisionError, SelectError, StatusExtras, fetch_revision,
    requeue, select_composition,
};
use crate::api::{CompositeResourceDefinition, Composition, CompositionRevision};

/// The XR finalizer core adds.
pub const FINALIZER: &str = "composite.apiextensions.crossplane.io";
/// Core's deadline for one reconcile.
pub const RECONCILE_TIMEOUT: Duration = Duration::from_secs(120);

/// Why a reconcile failed (the queue backs the XR off).
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

/// Reconciles the XRs of one XRD.
pub struct Reconciler {
    client: kube::Client,
    xrd: CompositeResourceDefinition,
    resource: ApiResource,
    composer: Composer,
    settings: RequeueSettings,
    realtime: Option<Arc<Realtime>>,
}

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
        }
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
    /// - A missing XR is done. A deleting XR loses its finalizer; its composed resources
    ///   go by the API server's garbage collector, as they are owned by it.
    /// - The finalizer, a newly selected Composition, a changed revision reference and the
    ///   `crossplane.io/composite` label are each one XR Update, sent only when needed.
    /// - Then one compose ([`Composer::compose`]) within core's 2-minute deadline, and the
    ///   requeue of [`requeue`].
    ///
    /// - The whole reconcile, every request and function call, runs under core's 2-minute
    ///   deadline: when it passes, what is in flight is abandoned and the reconcile fails
    ///   ([`ReconcileError::DeadlineExceeded`]), as Go's context timeout does
    ///   (crossplane#6240: sequential applies after a slow function).
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
        let requeue =
            tokio::time::timeout_at(deadline, self.reconcile_by(namespace, name, u, deadline))
                .await
                .map_err(|_| ReconcileError::DeadlineExceeded(started.elapsed()))??;
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

    async fn reconcile_by(
        &self,
        namespace: Option<&str>,
        name: &str,
        u: f64,
        deadline: Instant,
    ) -> Result<Requeue, ReconcileError> {
        let xrs = self.xrs(namespace);
        let Some(mut xr) = xrs
            .get_opt(name)
            .await
            .map_err(api("get composite resource"))?
        else {
            return Ok(Requeue::Never);
        };

        if xr.metadata.deletion_timestamp.is_some() {
            let finalizers = xr.metadata.finalizers.get_or_insert_with(Vec::new);
            if finalizers.iter().any(|f| f == FINALIZER) {
                finalizers.retain(|f| f != FINALIZER);
                xrs.replace(name, &PostParams::default(), &xr)
                    .await
                    .map_err(api("remove finalizer"))?;
            }
            return Ok(Requeue::Never);
        }

        let finalizers = xr.metadata.finalizers.get_or_insert_with(Vec::new);
        if !finalizers.iter().any(|f| f == FINALIZER) {
            finalizers.push(FINALIZER.to_owned());
            xr = xrs
                .replace(name, &PostParams::default(), &xr)
                .await
                .map_err(api("add finalizer"))?;
        }

        let compositions: Vec<Composition> = Api::<Composition>::all(self.client.clone())
            .list(&ListParams::default())
            .await
            .map_err(api("list Compositions"))?
            .items;
        let mut machinery = Machinery::read(&xr.data).map_err(ReconcileError::Machinery)?;
        let selection = select_composition(
            &self.resource.api_version,
            &self.resource.kind,
            &mut machinery,
            &self.xrd,
            &compositions,
            |n| rand::random_range(0..n),
        )
        .map_err(ReconcileError::Select)?;
        if selection.update {
            xr = self.update_machinery(&xrs, xr, &machinery).await?;
        }

        let composition_name = machinery
            .composition_ref
            .as_ref()
            .map(|r| r.name.clone())
            .unwrap_or_default();
        let Some(composition) = compositions
            .iter()
            .find(|c| c.metadata.name.as_deref() == Some(composition_name.as_str()))
        else {
            return Err(ReconcileError::Select(SelectError::NoCompatibleComposition));
        };
        let revisions: Vec<CompositionRevision> =
            Api::<CompositionRevision>::all(self.client.clone())
                .list(&ListParams::default())
                .await
                .map_err(api("list CompositionRevisions"))?
                .items;
        let pick = fetch_revision(&mut machinery, composition, &revisions);
        let revision = match pick {
            Ok(pick) => {
                if pick.update {
                    xr = self.update_machinery(&xrs, xr, &machinery).await?;
                }
                pick.revision
            }
            Err(error) => return Err(ReconcileError::Revision(error)),
        };

        let labels = xr.metadata.labels.get_or_insert_with(Default::default);
        if labels.get(LABEL_COMPOSITE).is_none_or(String::is_empty) {
            labels.insert(LABEL_COMPOSITE.to_owned(), name.to_owned());
            xr = xrs
                .replace(name, &PostParams::default(), &xr)
                .await
                .map_err(api("add the composite label"))?;
        }

        let mut extras = StatusExtras {
            responsive: self.realtime.as_ref().map(|r| {
                r.responsive(
                    Instant::now(),
                    &Request::new(namespace.unwrap_or_default(), name),
                )
            }),
            last_handled_reconcile_at: None,
        };
        // The reconcile-request token, recorded once (core records it before composing).
        let annotations = xr.metadata.annotations.clone().unwrap_or_default();
        if let Some(token) = annotations
            .get(RECONCILE_REQUESTED_AT_ANNOTATION)
            .filter(|t| !t.is_empty())
        {
            extras.last_handled_reconcile_at = Some(token.clone());
        }
        let composed = self
            .composer
            .compose_with(&xr, &self.resource, revision, deadline, &extras)
            .await
            .map_err(ReconcileError::Compose)?;
        let annotation = xr
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(limiter::crossplane::POLL_INTERVAL_ANNOTATION))
            .map(String::as_str);
        Ok(requeue(
            self.settings,
            annotation,
            composed.outcome.waiting,
            composed.ttl.unwrap_or_default(),
            u,
        ))
    }

    async fn update_machinery(
        &self,
        xrs: &Api<DynamicObject>,
        mut xr: DynamicObject,
        machinery: &Machinery,
    ) -> Result<DynamicObject, ReconcileError> {
        let mut data = std::mem::replace(&mut xr.data, json!({}));
        if !data.is_object() {
            data = Value::Object(Default::default());
        }
        machinery.write(&mut data);
        xr.data = data;
        let name = xr.metadata.name.clone().unwrap_or_default();
        xrs.replace(&name, &PostParams::default(), &xr)
            .await
            .map_err(api("update composite resource"))
    }
}
