//! The reconcile's sequence of steps, in core's order: read, finalizer, Composition,
//! revision, label, compose, conditions, status.

use kube::api::{DynamicObject, PostParams};
use limiter::controller::Request;
use limiter::crossplane::circuit::Responsive;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::error::{api, is_conflict};
use super::{FINALIZER, Failure, InFlight, ReconcileError, Reconciler, error_message};
use crate::api::{Composition, CompositionRevision};
use crate::composite::compose::result_events;
use crate::composite::conditions::{
    deleting, mark, mark_unseen_unknown, reconcile_error, reconcile_success, responsive_condition,
    set_function_conditions,
};
use crate::composite::events::{
    REASON_COMPOSE, REASON_COMPOSITION_SELECTION, REASON_DELETE, REASON_INIT,
    REASON_RECONCILE_REQUEST_HANDLED, REASON_SELECT_COMPOSITION,
};
use crate::composite::{
    ComposeError, LABEL_COMPOSITE, Machinery, RECONCILE_REQUESTED_AT_ANNOTATION, Requeue,
    RevisionError, SelectError, fetch_revision, requeue, select_composition,
};
use crate::function::pipeline::PipelineError;

impl Reconciler {
    #[expect(
        clippy::too_many_lines,
        reason = "core's Reconcile is one long sequence"
    )]
    pub(super) async fn reconcile_by(
        &self,
        namespace: Option<&str>,
        name: &str,
        u: f64,
        deadline: Instant,
        in_flight: &InFlight,
    ) -> Result<Requeue, ReconcileError> {
        let xrs = self.xrs(namespace);
        let read = match &self.cache {
            Some(cache) => cache
                .get_synced(&self.resource, namespace, name)
                .await
                .map(crate::composite::Cached::into_object),
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
        mark(&mut xr, &[responsive_condition(&responsive)], &self.clock);

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
            mark(&mut xr, &[deleting()], &self.clock);
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
            mark(&mut xr, &[reconcile_success()], &self.clock);
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
            |n| self.draws.below(n),
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
                mark(&mut xr, &[reconcile_error(message)], &self.clock);
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
                    seen = set_function_conditions(&mut xr, conditions, &self.clock);
                }
                mark_unseen_unknown(&mut xr, &seen, &self.clock);
                let _ = self.put_status(namespace, name, &xr).await;
                return Err(error);
            }
        };
        in_flight.lock().expect("not poisoned").take();
        let mut xr = composed.xr.clone();
        for (type_, reason, message) in &composed.events {
            self.events.record(&xr, *type_, reason, message.clone());
        }
        set_function_conditions(&mut xr, &composed.conditions, &self.clock);
        for message in &composed.outcome.events {
            self.events.normal(&xr, REASON_COMPOSE, message.clone());
        }
        mark(&mut xr, &composed.outcome.conditions, &self.clock);

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
}
