//! The generic API's operations on the store, and the per-resource faults they apply.

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use serde_json::json;

use super::input::{parse_create, parse_page, parse_update};
use super::{GenericFront, Routed};
use crate::cloud::MockCloud;
use crate::http::respond::{self, ResponseBody};
use crate::journal::QUOTA_EXCEEDED;
use crate::model::{Action, Collection, State};
use crate::pipeline::Outcome;
use crate::resource_faults::{self, ResourceVerdict, Subject};
use crate::store::{Created, Deleted, StoreError};

impl MockCloud {
    /// The per-resource faults of the request (none for a list or an unreadable create).
    pub(super) fn resource_verdict(&self, request: &Routed<'_>, body: &Bytes) -> ResourceVerdict {
        let action = request.action;
        let Some((rules, seed)) = self.resource_rules() else {
            return ResourceVerdict::default();
        };
        let parsed = (action == Action::Create)
            .then(|| parse_create(request.collection, body).ok())
            .flatten();
        let Some(name) = request
            .name
            .or(parsed.as_ref().map(|(name, _)| name.as_str()))
        else {
            return ResourceVerdict::default();
        };
        let stored = if resource_faults::needs_spec(&rules) && parsed.is_none() {
            let mut store = self.inner.store.lock();
            store
                .read(
                    request.account,
                    request.collection,
                    name,
                    self.elapsed(),
                    |r| serde_json::to_value(r).ok(),
                )
                .ok()
                .flatten()
                .and_then(|mut r| r.get_mut("spec").map(serde_json::Value::take))
        } else {
            None
        };
        let spec = parsed.as_ref().map(|(_, spec)| spec).or(stored.as_ref());
        let subject = Subject {
            kind: request.collection.into(),
            name,
            action,
        };
        resource_faults::decide(&rules, seed, &subject, spec)
    }

    /// The operation of an authenticated, admitted request.
    pub(super) fn operate(
        &self,
        front: &GenericFront<'_>,
        request: &Routed<'_>,
        outcome: &mut Outcome<'_>,
        verdict: &ResourceVerdict,
    ) -> Response<ResponseBody> {
        let (action, body) = (request.action, front.body());
        let now = self.elapsed();
        let (account, collection) = (request.account, request.collection);
        let name = request.name.unwrap_or_default();
        let mut store = self.inner.store.lock();
        let result = match action {
            Action::Get if verdict.is_empty() => store.read(account, collection, name, now, |r| {
                respond::json(StatusCode::OK, &r)
            }),
            Action::Get => store
                .read(account, collection, name, now, |r| serde_json::to_value(r))
                .and_then(|read| faulted_read(read, verdict, now)),
            Action::Update => {
                let spec = match parse_update(body) {
                    Ok(spec) => spec,
                    Err(bad) => return bad.response(),
                };
                store
                    .update(account, collection, name, spec, now)
                    .map(|r| respond::json(StatusCode::OK, &r))
            }
            Action::Delete => store
                .delete(account, collection, name, now)
                .map(|d| match d {
                    Deleted::Gone(r) => respond::json(StatusCode::OK, &r),
                    Deleted::Deleting(r) => respond::json(StatusCode::ACCEPTED, &r),
                }),
            Action::Create => {
                let (name, spec) = match parse_create(collection, body) {
                    Ok(parsed) => parsed,
                    Err(bad) => return bad.response(),
                };
                outcome.name = std::borrow::Cow::Owned(name.clone());
                let key = front
                    .headers
                    .get("idempotency-key")
                    .and_then(|v| v.to_str().ok());
                let limit = self
                    .inner
                    .counts
                    .get(account)
                    .and_then(|c| c.get(&collection))
                    .copied();
                store
                    .create(account, collection, &name, spec, key, limit, now)
                    .map(|created| match (created, verdict.slow_create) {
                        (Created::New(mut r), Some(hold)) if !hold.is_zero() => {
                            store.hold_creating(account, collection, &name, now + hold);
                            r.state = State::Creating;
                            Created::New(r)
                        }
                        (created, _) => created,
                    })
                    .map(created_response)
            }
            Action::List => {
                let (limit, after) = match parse_page(front.query) {
                    Ok(page) => page,
                    Err(bad) => return bad.response(),
                };
                store
                    .list(account, collection, after, limit, now)
                    .map(|(items, more)| {
                        let next = more.then(|| items.last().map(|r| r.name.clone())).flatten();
                        respond::json(
                            StatusCode::OK,
                            &json!({"items": items, "next_page_token": next}),
                        )
                    })
            }
        };
        drop(store);
        result.unwrap_or_else(|err| {
            if matches!(err, StoreError::QuotaExceeded { .. }) {
                outcome.flags |= QUOTA_EXCEEDED;
            }
            self.store_error(err, collection)
        })
    }

    fn store_error(&self, err: StoreError, collection: Collection) -> Response<ResponseBody> {
        match err {
            StoreError::NotFound => {
                respond::error(StatusCode::NOT_FOUND, "NotFound", "no such resource")
            }
            StoreError::AlreadyExists => respond::error(
                StatusCode::CONFLICT,
                "AlreadyExists",
                "a resource with this name exists",
            ),
            StoreError::NotAvailable(state) => respond::error(
                StatusCode::CONFLICT,
                "NotAvailable",
                &format!("the resource is {} and cannot be updated", state.as_str()),
            ),
            StoreError::QuotaExceeded { limit } => {
                respond::quota_exceeded(self.inner.config.flavor, collection.as_str(), limit)
            }
        }
    }
}

/// A read of a resource that per-resource faults touch: NotFound inside its window after the
/// create, and the drifted field.
fn faulted_read(
    read: Result<serde_json::Value, serde_json::Error>,
    verdict: &ResourceVerdict,
    now: std::time::Duration,
) -> Result<Response<ResponseBody>, StoreError> {
    let mut value = match read {
        Ok(value) => value,
        Err(err) => {
            return Ok(respond::error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalError",
                &err.to_string(),
            ));
        }
    };
    if let Some(window) = verdict.not_found_after_create {
        let created = value
            .get("created_at_us")
            .and_then(serde_json::Value::as_u64)
            .map(std::time::Duration::from_micros)
            .unwrap_or_default();
        if now < created + window {
            return Err(StoreError::NotFound);
        }
    }
    if let Some(field) = &verdict.drift
        && let Some(spec) = value.get_mut("spec")
    {
        resource_faults::drift(spec, field.as_deref());
    }
    Ok(respond::json(StatusCode::OK, &value))
}

fn created_response(created: Created) -> Response<ResponseBody> {
    let (resource, replayed) = match created {
        Created::New(r) => (r, false),
        Created::Replayed(r) => (r, true),
    };
    let mut response = respond::json(StatusCode::CREATED, &resource);
    let location = format!(
        "/v1/accounts/{}/{}/{}",
        resource.account, resource.collection, resource.name
    );
    let headers = response.headers_mut();
    if let Ok(location) = HeaderValue::from_str(&location) {
        headers.insert(header::LOCATION, location);
    }
    if replayed {
        headers.insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    if resource.state == State::Creating {
        headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    response
}
