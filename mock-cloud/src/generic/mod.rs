//! The generic JSON API under `/v1/accounts/…`, the fifth service of the pipeline: its
//! [`Front`] says what each step means for a bearer-token request.
//!
//! # Semantics
//! A request is checked in this order, and the first failure answers it: route (404),
//! method (405), bearer token (401), account of the token (403, before any lookup, so it
//! never reveals whether another account's resource exists), body size (413), rate quota
//! (429 or the flavor's throttle), injected latency and faults (500/503), per-resource
//! faults, body fields (400), then the operation itself (404, 409, count quota). Only
//! requests that reach the rate-quota check spend tokens.

mod input;
mod operate;

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode, header};

use crate::cloud::MockCloud;
use crate::faults::FaultDecision;
use crate::http::respond::{self, ResponseBody};
use crate::http::route::Route;
use crate::journal::FAULT;
use crate::model::{Action, Collection};
use crate::pipeline::{Front, Outcome, Routing};
use crate::quota::{Budget, Layer, Verdict};
use crate::resource_faults::ResourceVerdict;
use crate::service::Operation;

/// A request that is not an AWS one nor the admin API's, its body read (or found too
/// large) if its method has one.
pub(crate) struct GenericFront<'r> {
    pub method: &'r Method,
    pub headers: &'r HeaderMap,
    pub query: Option<&'r str>,
    /// What the path addresses (anything but [`Route::Api`] is an unknown path).
    pub route: Route<'r>,
    pub body: Result<Bytes, StatusCode>,
}

/// What routing understood: the resource and what to do with it.
pub(crate) struct Routed<'r> {
    pub account: &'r str,
    pub collection: Collection,
    pub name: Option<&'r str>,
    pub action: Action,
}

impl<'r> Front for GenericFront<'r> {
    type Routed = Routed<'r>;
    /// The account of the bearer token.
    type Caller = Arc<str>;
    type Prepared = ResourceVerdict;
    /// The generic API's errors are JSON answers already.
    type Error = Response<ResponseBody>;

    fn route<'f>(&'f self, outcome: &mut Outcome<'f>) -> Routing<Routed<'r>, Self::Error> {
        let Route::Api {
            account,
            collection,
            name,
        } = self.route
        else {
            let unknown = respond::error(StatusCode::NOT_FOUND, "NotFound", "unknown path");
            return Routing::Refused(unknown);
        };
        outcome.collection = Some(collection);
        outcome.name = Cow::Borrowed(name.unwrap_or_default());
        let action = match (name.is_some(), self.method) {
            (false, &Method::GET) => Action::List,
            (false, &Method::POST) => Action::Create,
            (false, _) => return Routing::Refused(respond::method_not_allowed("GET, POST")),
            (true, &Method::GET) => Action::Get,
            (true, &Method::PUT) => Action::Update,
            (true, &Method::DELETE) => Action::Delete,
            (true, _) => {
                return Routing::Refused(respond::method_not_allowed("GET, PUT, DELETE"));
            }
        };
        outcome.action = Some(action);
        outcome.op = Some(Operation::from(action));
        Routing::Routed(Routed {
            account,
            collection,
            name,
            action,
        })
    }

    fn authenticate<'f>(
        &'f self,
        cloud: &MockCloud,
        _: Option<&Routed<'r>>,
        _: Duration,
        outcome: &mut Outcome<'f>,
    ) -> Result<Arc<str>, Self::Error> {
        let Some(account) = bearer_account(cloud, self.headers) else {
            let mut response = respond::error(
                StatusCode::UNAUTHORIZED,
                "Unauthenticated",
                "a valid `Authorization: Bearer <token>` header is required",
            );
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return Err(response);
        };
        outcome.account = Some(account.clone());
        Ok(account)
    }

    fn admit(&self, caller: &Arc<str>, routed: &Routed<'r>) -> Result<(), Self::Error> {
        if **caller != *routed.account {
            return Err(respond::error(
                StatusCode::FORBIDDEN,
                "Forbidden",
                "the token does not grant access to this account",
            ));
        }
        match &self.body {
            Ok(_) => Ok(()),
            Err(status) => Err(respond::body_error(*status)),
        }
    }

    fn quota(&self, cloud: &MockCloud, caller: &Arc<str>, routed: &Routed<'r>) -> Option<Verdict> {
        let quotas = cloud.inner.quotas.read();
        Some(quotas.check(caller, routed.action))
    }

    fn throttle(
        &self,
        cloud: &MockCloud,
        layer: Layer,
        budget: Budget,
        wait: Duration,
    ) -> Self::Error {
        respond::throttled(cloud.inner.config.flavor, layer, budget, wait)
    }

    fn faults(&self, cloud: &MockCloud, routed: &Routed<'r>, at: Duration) -> FaultDecision {
        cloud.decide_faults(routed.action.class(), at)
    }

    fn fault(&self, status: StatusCode, _: Option<&str>) -> Self::Error {
        respond::error(status, "InjectedFault", "the cloud is failing on purpose")
    }

    fn resource_faults<'f>(
        &'f self,
        cloud: &MockCloud,
        _: &Arc<str>,
        routed: &Routed<'r>,
        _: Duration,
        outcome: &mut Outcome<'f>,
    ) -> Result<ResourceVerdict, Self::Error> {
        let verdict = cloud.resource_verdict(routed, self.body());
        let Some((status, code)) = &verdict.error else {
            return Ok(verdict);
        };
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
        Err(response)
    }

    fn operate<'f>(
        &'f self,
        cloud: &MockCloud,
        _: &Arc<str>,
        routed: &Routed<'r>,
        verdict: ResourceVerdict,
        budget: Option<Budget>,
        _: Duration,
        outcome: &mut Outcome<'f>,
    ) -> Result<Response<ResponseBody>, Self::Error> {
        let mut response = cloud.operate(self, routed, outcome, &verdict);
        if let Some(budget) = budget {
            respond::add_budget(&mut response, budget);
        }
        Ok(response)
    }

    fn answer(&self, _: &MockCloud, error: Self::Error) -> Response<ResponseBody> {
        error
    }
}

impl GenericFront<'_> {
    /// The body (empty if it could not be read: `admit` answered such a request).
    fn body(&self) -> &Bytes {
        static EMPTY: Bytes = Bytes::new();
        self.body.as_ref().unwrap_or(&EMPTY)
    }
}

/// The account of the request's bearer token.
fn bearer_account(cloud: &MockCloud, headers: &HeaderMap) -> Option<Arc<str>> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let token = value.strip_prefix("Bearer ")?.trim();
    cloud.inner.tokens.get(token).cloned()
}
