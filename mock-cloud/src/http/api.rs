//! The cloud API: authentication, quotas, faults, then the resource operation, and a
//! journal entry for every request.
//!
//! # Semantics
//! A request is checked in this order, and the first failure answers it: route (404),
//! method (405), bearer token (401), account of the token (403, before any lookup, so it
//! never reveals whether another account's resource exists), body size (413), rate quota
//! (429 or the flavor's throttle), injected latency and faults (500/503), body fields
//! (400), then the operation itself (404, 409, count quota). Only requests that reach the
//! rate-quota check spend tokens.

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode, header};
use serde_json::json;
use tokio::time::Instant;

use super::input::{parse_create, parse_page, parse_update};
use super::respond::{self, ResponseBody};
use crate::cloud::MockCloud;
use crate::journal::{FAULT, QUOTA_EXCEEDED, Record, SHADOW_THROTTLED, THROTTLED};
use crate::model::{Action, Collection, State};
use crate::quota::Verdict;
use crate::resource_faults::{self, ResourceVerdict, Subject};
use crate::store::{Created, Deleted, StoreError};

/// The most bytes a request body may have.
pub const MAX_BODY: usize = 1 << 20;

/// A request addressed to the API, its body already read (or found too large).
pub(crate) struct ApiRequest<'a> {
    pub method: &'a Method,
    pub headers: &'a HeaderMap,
    pub query: Option<&'a str>,
    pub account: &'a str,
    pub collection: Collection,
    pub name: Option<&'a str>,
    pub body: Result<Bytes, StatusCode>,
}

/// What the journal needs to know besides the response.
struct Outcome<'a> {
    account: &'a str,
    action: Option<Action>,
    name: std::borrow::Cow<'a, str>,
    flags: u8,
    layer: Option<crate::quota::Layer>,
}

impl MockCloud {
    /// Answers an API request and journals it.
    pub(crate) async fn api(
        &self,
        request: ApiRequest<'_>,
        arrived: Instant,
    ) -> Response<ResponseBody> {
        let at = self.inner.clock.since_epoch(arrived);
        let mut outcome = Outcome {
            account: "",
            action: None,
            name: std::borrow::Cow::Borrowed(request.name.unwrap_or_default()),
            flags: 0,
            layer: None,
        };
        let response = self.api_inner(&request, at, &mut outcome).await;
        let record = Record {
            at,
            latency: arrived.elapsed(),
            account: outcome.account,
            action: outcome.action,
            collection: Some(request.collection),
            operation: outcome.action.map(crate::service::Operation::from),
            name: &outcome.name,
            status: response.status().as_u16(),
            flags: outcome.flags,
            retry_after_ms: crate::journal::retry_hint_ms(
                response.status().as_u16(),
                response.headers(),
            ),
        };
        let seq = self.record(&record, outcome.layer);
        tracing::trace!(
            seq,
            status = record.status,
            account = record.account,
            "api call"
        );
        response
    }

    async fn api_inner<'a>(
        &'a self,
        request: &ApiRequest<'a>,
        at: std::time::Duration,
        outcome: &mut Outcome<'a>,
    ) -> Response<ResponseBody> {
        let action = match (request.name.is_some(), request.method) {
            (false, &Method::GET) => Action::List,
            (false, &Method::POST) => Action::Create,
            (false, _) => return respond::method_not_allowed("GET, POST"),
            (true, &Method::GET) => Action::Get,
            (true, &Method::PUT) => Action::Update,
            (true, &Method::DELETE) => Action::Delete,
            (true, _) => return respond::method_not_allowed("GET, PUT, DELETE"),
        };
        outcome.action = Some(action);
        let Some(caller) = self.authenticate(request.headers) else {
            let mut response = respond::error(
                StatusCode::UNAUTHORIZED,
                "Unauthenticated",
                "a valid `Authorization: Bearer <token>` header is required",
            );
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return response;
        };
        outcome.account = caller;
        if caller != request.account {
            return respond::error(
                StatusCode::FORBIDDEN,
                "Forbidden",
                "the token does not grant access to this account",
            );
        }
        let body = match &request.body {
            Ok(body) => body,
            Err(status) => return respond::body_error(*status),
        };

        let verdict = self
            .inner
            .quotas
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .check(caller, action);
        let budget = match verdict {
            Verdict::Admit { budget } => budget,
            Verdict::Throttle {
                layer,
                budget,
                wait,
            } => {
                outcome.layer = Some(layer);
                if !self.inner.config.shadow {
                    outcome.flags |= THROTTLED;
                    return respond::throttled(self.inner.config.flavor, layer, budget, wait);
                }
                outcome.flags |= SHADOW_THROTTLED;
                None
            }
        };

        let faults = self.decide_faults(action.class(), at);
        if !faults.latency.is_zero() {
            tokio::time::sleep(faults.latency).await;
        }
        if let Some(status) = faults.error {
            outcome.flags |= FAULT;
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
            return respond::error(status, "InjectedFault", "the cloud is failing on purpose");
        }

        let verdict = self.resource_verdict(request, action, body);
        if let Some((status, code)) = &verdict.error {
            outcome.flags |= FAULT;
            let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::FORBIDDEN);
            let mut response =
                respond::error(status, code, "the cloud refuses this resource on purpose");
            if let Some(after) = verdict.retry_after {
                response.headers_mut().insert(
                    header::RETRY_AFTER,
                    HeaderValue::from(crate::quota::retry_after_secs(after)),
                );
            }
            return response;
        }
        let mut response = self.operate(request, action, body, outcome, &verdict);
        if let Some(budget) = budget {
            respond::add_budget(&mut response, budget);
        }
        response
    }

    /// The per-resource faults of the request (none for a list or an unreadable create).
    fn resource_verdict(
        &self,
        request: &ApiRequest<'_>,
        action: Action,
        body: &Bytes,
    ) -> ResourceVerdict {
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
            let mut store = crate::cloud::lock(&self.inner.store);
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

    fn authenticate(&self, headers: &HeaderMap) -> Option<&str> {
        let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
        let token = value.strip_prefix("Bearer ")?.trim();
        self.inner.tokens.get(token).map(String::as_str)
    }

    fn operate(
        &self,
        request: &ApiRequest<'_>,
        action: Action,
        body: &Bytes,
        outcome: &mut Outcome<'_>,
        verdict: &ResourceVerdict,
    ) -> Response<ResponseBody> {
        let now = self.elapsed();
        let (account, collection) = (request.account, request.collection);
        let name = request.name.unwrap_or_default();
        let mut store = crate::cloud::lock(&self.inner.store);
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
                let key = request
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
                let (limit, after) = match parse_page(request.query) {
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
