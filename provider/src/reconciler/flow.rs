//! The managed reconciler's paths, in crossplane-runtime v2.4's order (the `P` numbers are
//! those of docs/managed-reconciler.md, "The paths").

use std::sync::Arc;

use kube::ResourceExt;
use limiter::controller::{Action, ReconcileResult, Request};
use limiter::crossplane::{
    ErrorRequeue, ObserveOnlyAbsent, POLL_INTERVAL_ANNOTATION, RECONCILE_REQUESTED_AT_ANNOTATION,
    jittered,
};

use super::ManagedReconciler;
use super::conditions::{self as c, error_chain};
use super::external::{ExternalClient, Observation};
use super::meta::{
    CreateStamps, external_name, has_finalizer, has_other_finalizers, idempotency_key,
};
use super::pass::{Pass, is_conflict};
use super::policies::Policies;
use crate::crd::{
    CREATE_FAILED_ANNOTATION, CREATE_PENDING_ANNOTATION, CREATE_SUCCEEDED_ANNOTATION,
    EXTERNAL_NAME_ANNOTATION, FINALIZER, Managed, PAUSED_ANNOTATION,
};
use crate::events::EventSink;

impl<K: Managed> ManagedReconciler<K> {
    /// One reconcile of `request`.
    pub(super) async fn run(&self, request: &Request) -> ReconcileResult {
        // P0: gone.
        let Some(mr) = self.cache.get(&request.namespace, &request.name) else {
            return Ok(Action::done());
        };
        // A type without Get/SetLastHandledReconcileAt (`--reconcile-requests=ignore`) never
        // has a token to handle: no event, nothing recorded.
        let token = self
            .ctx
            .settings
            .reconcile_requests
            .pending(
                mr.annotations()
                    .get(RECONCILE_REQUESTED_AT_ANNOTATION)
                    .map(String::as_str),
                mr.managed_status()
                    .and_then(|s| s.last_handled_reconcile_at.as_deref()),
            )
            .map(str::to_owned);
        let mut pass = Pass {
            ctx: Arc::clone(&self.ctx),
            cache: Arc::clone(&self.cache),
            mr,
            token,
            observed: None,
        };
        let events = self.ctx.events.clone();

        let policies = Policies::of(pass.mr.management_policies());

        // P1: paused (by annotation, or by an empty list of management policies).
        if pass
            .mr
            .annotations()
            .get(PAUSED_ANNOTATION)
            .map(String::as_str)
            == Some("true")
            || policies.paused()
        {
            events.normal(
                &pass.mr,
                "ReconciliationPaused",
                "Reconciliation is paused via the pause annotation".into(),
            );
            return pass.finish(&[c::reconcile_paused()], Action::done()).await;
        }
        if let Some(token) = &pass.token {
            events.normal(
                &pass.mr,
                "ReconcileRequestHandled",
                format!("Handled reconcile request {token:?}"),
            );
        }

        // P3: being deleted, and the policies do not allow Delete: orphan the cloud resource.
        if pass.mr.meta().deletion_timestamp.is_some() && !policies.should_delete() {
            return self.orphan(pass).await;
        }

        // P4: initialize the external name.
        if K::NAME_AS_EXTERNAL_NAME && external_name(&pass.mr).is_none() {
            let name = pass.mr.name_any();
            pass.mr
                .annotations_mut()
                .insert(EXTERNAL_NAME_ANNOTATION.to_owned(), name);
            if let Err(error) = pass.put().await {
                if is_conflict(&error) {
                    return Ok(Action::requeue());
                }
                let message = format!(
                    "cannot initialize managed resource: {}",
                    error_chain(&error)
                );
                events.warning(&pass.mr, "CannotInitializeManagedResource", message.clone());
                return pass
                    .finish(&[c::reconcile_error(message)], self.on_error())
                    .await;
            }
        }
        let name = external_name(&pass.mr).unwrap_or_default().to_owned();

        // P5: an incomplete create. crossplane-runtime stops here until a human acts; the
        // idempotency key makes a retry safe, so we carry on (see the crate docs).
        let stamps = CreateStamps::of(pass.mr.annotations());
        if stamps.incomplete() {
            tracing::info!(kind = self.kind, %request, "create was interrupted; retrying it with the same idempotency key");
        }

        // P7: connect.
        let external = match self.connecter.connect(&pass.mr).await {
            Ok(external) => external,
            Err(error) => {
                let message = format!("connect failed: {}", error_chain(&*error));
                events.warning(&pass.mr, "CannotConnectToProvider", message.clone());
                return pass
                    .finish(&[c::reconcile_error(message)], self.on_error())
                    .await;
            }
        };

        // P8: observe. A kind whose cloud assigns the name has nothing to observe before its
        // Create (upjet: an empty external name is a resource that does not exist).
        let observed = if name.is_empty() {
            Ok(Observation::absent())
        } else {
            external.observe(&pass.mr, &name).await
        };
        let observation = match observed {
            Ok(observation) => observation,
            Err(error) => {
                let message = format!("observe failed: {}", error_chain(&*error));
                events.warning(&pass.mr, "CannotObserveExternalResource", message.clone());
                return pass
                    .finish(&[c::reconcile_error(message)], self.on_error())
                    .await;
            }
        };
        let exists = observation.exists;
        let up_to_date = observation.up_to_date;
        let at_provider = observation.at_provider.clone();
        pass.observed = Some(observation);

        // P9: observe-only and the cloud resource is absent.
        if !exists && policies.observe_only() {
            let message = "observe failed: external resource does not exist".to_owned();
            events.warning(&pass.mr, "CannotObserveExternalResource", message.clone());
            let action = match self.ctx.settings.observe_only_absent {
                ObserveOnlyAbsent::Poll => Action::requeue_after(self.poll_after(&pass.mr)),
                ObserveOnlyAbsent::Backoff => self.on_error(),
            };
            return pass.finish(&[c::reconcile_error(message)], action).await;
        }

        // P10: creation grace (also while deleting).
        if !exists && stamps.succeeded_within(self.ctx.clock.now(), self.ctx.creation_grace) {
            events.normal(
                &pass.mr,
                "PendingExternalResource",
                "Waiting for external resource existence to be confirmed".into(),
            );
            return Ok(Action::requeue());
        }

        if pass.mr.meta().deletion_timestamp.is_some() {
            return self.delete(pass, external, name, exists).await;
        }

        // Observe-only and present: nothing to write to the cloud, poll later.
        if policies.observe_only() {
            let poll = self.poll_after(&pass.mr);
            return pass
                .finish(&[c::reconcile_success()], Action::requeue_after(poll))
                .await;
        }

        // P15: finalizer.
        if !has_finalizer(&pass.mr) {
            pass.mr.finalizers_mut().push(FINALIZER.to_owned());
            if let Err(error) = pass.put().await {
                if is_conflict(&error) {
                    return Ok(Action::requeue());
                }
                let message = format!("cannot add finalizer: {}", error_chain(&error));
                return pass
                    .finish(&[c::reconcile_error(message)], self.on_error())
                    .await;
            }
        }

        if !exists && policies.should_create() {
            return self.create(pass, external, name).await;
        }

        // P19: not up to date (or absent) and the policies allow no Update (or Create).
        if !exists || (!up_to_date && !policies.should_update()) {
            let poll = self.poll_after(&pass.mr);
            return pass
                .finish(&[c::reconcile_success()], Action::requeue_after(poll))
                .await;
        }

        if !up_to_date {
            // P20: update.
            if let Err(error) = external.update(&pass.mr, &name, at_provider.as_ref()).await {
                let message = format!("update failed: {}", error_chain(&*error));
                events.warning(&pass.mr, "CannotUpdateExternalResource", message.clone());
                return pass
                    .finish(&[c::reconcile_error(message)], self.on_error())
                    .await;
            }
            events.normal(
                &pass.mr,
                "UpdatedExternalResource",
                "Successfully requested update of external resource".into(),
            );
        }
        // P18 / P20: success, poll later.
        let poll = self.poll_after(&pass.mr);
        pass.finish(&[c::reconcile_success()], Action::requeue_after(poll))
            .await
    }

    /// The requeue of a failed reconcile: the per-item backoff, or at once in the
    /// deliberately broken `immediate` mode.
    fn on_error(&self) -> Action {
        match self.ctx.settings.error_requeue {
            ErrorRequeue::Backoff => Action::requeue(),
            ErrorRequeue::Immediate => Action::requeue_after(ErrorRequeue::IMMEDIATE),
        }
    }

    /// P3: being deleted without a Delete policy: remove the finalizer, leave the cloud
    /// resource, no Connect and no Observe.
    async fn orphan(&self, pass: Pass<K>) -> ReconcileResult {
        self.remove_finalizer(pass).await
    }

    /// The end of a deletion: the finalizer removed (nothing to do without it); a conflict
    /// requeues, any other failure is `Synced=False`.
    async fn remove_finalizer(&self, mut pass: Pass<K>) -> ReconcileResult {
        if !has_finalizer(&pass.mr) {
            return Ok(Action::done());
        }
        pass.mr.finalizers_mut().retain(|f| f != FINALIZER);
        match pass.put().await {
            Ok(()) => Ok(Action::done()),
            Err(error) if is_conflict(&error) => Ok(Action::requeue()),
            Err(error) => {
                // The failed PUT left the working copy without the finalizer; put it back so
                // the status write does not carry the removal.
                pass.mr.finalizers_mut().push(FINALIZER.to_owned());
                let message = format!("cannot remove finalizer: {}", error_chain(&error));
                pass.finish(
                    &[c::deleting(), c::reconcile_error(message)],
                    self.on_error(),
                )
                .await
            }
        }
    }

    /// P11–P13: the object is being deleted.
    async fn delete(
        &self,
        mut pass: Pass<K>,
        external: Box<dyn ExternalClient<K>>,
        name: String,
        exists: bool,
    ) -> ReconcileResult {
        let events = self.ctx.events.clone();
        if has_other_finalizers(&pass.mr) {
            return Ok(Action::requeue());
        }
        if exists {
            return match external.delete(&pass.mr, &name).await {
                Ok(()) => {
                    events.normal(
                        &pass.mr,
                        "DeletedExternalResource",
                        "Successfully requested deletion of external resource".into(),
                    );
                    pass.finish(&[c::deleting(), c::reconcile_success()], Action::requeue())
                        .await
                }
                Err(error) => {
                    let message = format!("delete failed: {}", error_chain(&*error));
                    events.warning(&pass.mr, "CannotDeleteExternalResource", message.clone());
                    pass.finish(
                        &[c::deleting(), c::reconcile_error(message)],
                        self.on_error(),
                    )
                    .await
                }
            };
        }
        self.remove_finalizer(pass).await
    }

    /// P16: create, bracketed by the pending and succeeded/failed stamps.
    async fn create(
        &self,
        mut pass: Pass<K>,
        external: Box<dyn ExternalClient<K>>,
        name: String,
    ) -> ReconcileResult {
        let events = self.ctx.events.clone();
        let key = idempotency_key(&pass.mr);
        pass.mr
            .annotations_mut()
            .insert(CREATE_PENDING_ANNOTATION.to_owned(), self.ctx.clock.stamp());
        if let Err(error) = pass.put().await {
            return create_write_failed(pass, &events, &error, self.on_error()).await;
        }
        let created = match external.create(&pass.mr, &name, &key).await {
            Ok(created) => created,
            Err(error) => {
                return self.create_failed(pass, &*error).await;
            }
        };
        // A name the cloud assigned is written with the succeeded stamp, as upjet's
        // critical annotation update does.
        let mut stamp = vec![(CREATE_SUCCEEDED_ANNOTATION, self.ctx.clock.stamp())];
        if let Some(assigned) = created {
            stamp.push((EXTERNAL_NAME_ANNOTATION, assigned));
        }
        if let Err(error) = pass.put_critical(&stamp).await {
            return create_write_failed(pass, &events, &error, self.on_error()).await;
        }
        events.normal(
            &pass.mr,
            "CreatedExternalResource",
            "Successfully requested creation of external resource".into(),
        );
        // Observe's findings were about the absent resource; Ready is Creating now.
        pass.observed = None;
        pass.finish(&[c::creating(), c::reconcile_success()], Action::requeue())
            .await
    }

    /// P16's failure: the failed stamp, a warning and a rate-limited requeue.
    async fn create_failed(
        &self,
        mut pass: Pass<K>,
        error: &(dyn std::error::Error + Send + Sync + 'static),
    ) -> ReconcileResult {
        let events = self.ctx.events.clone();
        {
            let stamp = [(CREATE_FAILED_ANNOTATION, self.ctx.clock.stamp())];
            if let Err(update) = pass.put_critical(&stamp).await {
                let message = format!("cannot update managed resource: {}", error_chain(&update));
                events.warning(&pass.mr, "CannotUpdateManagedResource", message);
            }
        }
        let message = format!("create failed: {}", error_chain(error));
        events.warning(&pass.mr, "CannotCreateExternalResource", message.clone());
        pass.finish(
            &[c::creating(), c::reconcile_error(message)],
            self.on_error(),
        )
        .await
    }

    /// The requeue after a successful reconcile: the resource's own interval (annotation
    /// clamped up to the minimum, or the default) with jitter proportional to it. An invalid
    /// annotation gets a warning event.
    fn poll_after(&self, mr: &K) -> std::time::Duration {
        let settings = &self.ctx.settings;
        let effective = settings.effective_poll(
            mr.annotations()
                .get(POLL_INTERVAL_ANNOTATION)
                .map(String::as_str),
        );
        if let Some(rejected) = &effective.rejected {
            self.ctx.events.warning(
                mr,
                "InvalidPollInterval",
                format!(
                    "{}; using the default {:?}",
                    error_chain(rejected),
                    effective.interval
                ),
            );
        }
        let jitter = settings.jitter().for_interval(effective.interval);
        jittered(effective.interval, jitter, self.ctx.draws.unit())
    }
}

/// A metadata write bracketing a Create failed: a conflict requeues quietly; anything else is
/// a Warning event, a ReconcileError condition and a rate-limited requeue.
async fn create_write_failed<K: Managed>(
    mut pass: Pass<K>,
    events: &EventSink,
    error: &kube::Error,
    on_error: Action,
) -> ReconcileResult {
    if is_conflict(error) {
        return Ok(Action::requeue());
    }
    let message = format!("cannot update managed resource: {}", error_chain(error));
    events.warning(&pass.mr, "CannotUpdateManagedResource", message.clone());
    pass.finish(&[c::creating(), c::reconcile_error(message)], on_error)
        .await
}
