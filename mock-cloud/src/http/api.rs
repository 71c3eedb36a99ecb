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
use serde_json::{Value, json};
use tokio::time::Instant;

use super::respond::{self, ResponseBody};
use super::route::query_param;
use crate::cloud::MockCloud;
use crate::config::is_path_segment;
use crate::journal::{FAULT, QUOTA_EXCEEDED, Record, SHADOW_THROTTLED, THROTTLED};
use crate::model::{Action, Collection, State};
use crate::quota::Verdict;
use crate::store::{Created, Deleted, StoreError};

/// The most bytes a request body may have.
pub const MAX_BODY: usize = 1 << 20;

/// The default and largest page of a list.
const DEFAULT_PAGE: usize = 100;
const MAX_PAGE: usize = 1_000;

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
            name: &outcome.name,
            status: response.status().as_u16(),
            flags: outcome.flags,
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

        let mut response = self.operate(request, action, body, outcome);
        if let Some(budget) = budget {
            respond::add_budget(&mut response, budget);
        }
        response
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
    ) -> Response<ResponseBody> {
        let now = self.elapsed();
        let (account, collection) = (request.account, request.collection);
        let name = request.name.unwrap_or_default();
        let mut store = crate::cloud::lock(&self.inner.store);
        let result = match action {
            Action::Get => store.read(account, collection, name, now, |r| {
                respond::json(StatusCode::OK, &r)
            }),
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

/// A request field that is missing or wrong: answered with a 400 naming it.
#[derive(Debug)]
struct BadField {
    field: String,
    message: String,
}

impl BadField {
    fn new(field: &str, message: &str) -> BadField {
        BadField {
            field: field.to_owned(),
            message: message.to_owned(),
        }
    }

    fn response(&self) -> Response<ResponseBody> {
        respond::bad_field(&self.field, &self.message)
    }
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

fn parse_object(body: &Bytes) -> Result<serde_json::Map<String, Value>, BadField> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(BadField::new("body", "the body must be a JSON object")),
        Err(err) => Err(BadField::new("body", &format!("malformed JSON: {err}"))),
    }
}

fn spec_of(map: &mut serde_json::Map<String, Value>, required: bool) -> Result<Value, BadField> {
    match map.remove("spec") {
        Some(spec @ Value::Object(_)) => Ok(spec),
        Some(_) => Err(BadField::new("spec", "`spec` must be a JSON object")),
        None if required => Err(BadField::new("spec", "missing field `spec`")),
        None => Ok(Value::Object(serde_json::Map::new())),
    }
}

/// A create body: `{"name": "...", "spec": {...}}`; records need `spec.type` and `spec.value`.
fn parse_create(collection: Collection, body: &Bytes) -> Result<(String, Value), BadField> {
    let mut map = parse_object(body)?;
    let name = match map.remove("name") {
        Some(Value::String(name)) if is_path_segment(&name) => name,
        Some(_) => {
            return Err(BadField::new(
                "name",
                "`name` must be 1 to 64 of a-z, A-Z, 0-9, '-', '_', '.'",
            ));
        }
        None => return Err(BadField::new("name", "missing field `name`")),
    };
    let spec = spec_of(&mut map, false)?;
    if let Some(field) = map.keys().next() {
        return Err(BadField::new(field, &format!("unknown field `{field}`")));
    }
    if collection == Collection::Records {
        for field in ["type", "value"] {
            if !spec.get(field).is_some_and(Value::is_string) {
                let message = format!("a record needs a string `spec.{field}`");
                return Err(BadField::new(&format!("spec.{field}"), &message));
            }
        }
    }
    Ok((name, spec))
}

/// An update body: `{"spec": {...}}`.
fn parse_update(body: &Bytes) -> Result<Value, BadField> {
    let mut map = parse_object(body)?;
    let spec = spec_of(&mut map, true)?;
    match map.keys().next() {
        Some(field) => Err(BadField::new(field, &format!("unknown field `{field}`"))),
        None => Ok(spec),
    }
}

/// `?limit=N&page_token=NAME`.
fn parse_page(query: Option<&str>) -> Result<(usize, Option<&str>), BadField> {
    let limit = match query_param(query, "limit") {
        None => DEFAULT_PAGE,
        Some(v) => match v.parse::<usize>() {
            Ok(n) if (1..=MAX_PAGE).contains(&n) => n,
            _ => {
                let message = format!("`limit` must be a whole number from 1 to {MAX_PAGE}");
                return Err(BadField::new("limit", &message));
            }
        },
    };
    let after = query_param(query, "page_token").filter(|t| !t.is_empty());
    Ok((limit, after))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_of(bad: BadField) -> String {
        let response = bad.response();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        let body = futures_body(response);
        assert_eq!(body["error"]["message"], bad.message);
        body["error"]["field"].as_str().unwrap().to_owned()
    }

    fn futures_body(response: Response<ResponseBody>) -> Value {
        use http_body_util::BodyExt;
        let bytes = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(response.into_body().collect())
            .unwrap()
            .to_bytes();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[test]
    fn create_bodies_name_the_missing_or_bad_field() {
        let bad = |body: &str| {
            field_of(parse_create(Collection::Records, &Bytes::from(body.to_owned())).unwrap_err())
        };
        assert_eq!(bad("{"), "body");
        assert_eq!(bad("[]"), "body");
        assert_eq!(bad(r#"{"spec": {}}"#), "name");
        assert_eq!(bad(r#"{"name": "a b"}"#), "name");
        assert_eq!(bad(r#"{"name": "r", "spec": 3}"#), "spec");
        assert_eq!(bad(r#"{"name": "r", "colour": 3}"#), "colour");
        assert_eq!(bad(r#"{"name": "r", "spec": {"type": "A"}}"#), "spec.value");
    }

    #[test]
    fn update_bodies_need_a_spec_and_pages_a_sane_limit() {
        assert_eq!(
            field_of(parse_update(&Bytes::from_static(b"{}")).unwrap_err()),
            "spec"
        );
        assert_eq!(field_of(parse_page(Some("limit=0")).unwrap_err()), "limit");
        assert_eq!(field_of(parse_page(Some("limit=x")).unwrap_err()), "limit");
        assert_eq!(
            parse_page(Some("limit=5&page_token=b")).ok(),
            Some((5, Some("b")))
        );
    }
}
