//! The AWS services' [`Front`]: what each step of the pipeline means for a request signed
//! with SigV4 (or an unsigned STS web-identity call), answered in its service's protocol.

use std::time::Duration;

use bytes::Bytes;
use http::{Method, Response, StatusCode};

use super::accounts::Caller;
use super::contract::{AwsRequest, Ctx, Routed};
use super::envelope::{self, AwsError, Reply, RequestId};
use super::{auth, dispatch_handle, dispatch_route, ec2, params, sigv4, sts};
use crate::cloud::MockCloud;
use crate::faults::FaultDecision;
use crate::http::respond::ResponseBody;
use crate::journal::FAULT;
use crate::pipeline::{Front, Outcome, Routing};
use crate::quota::{Budget, Layer, Verdict};
use crate::service::{Protocol, Service};

/// An AWS request of one service, its body read (or the reason it could not be).
pub(crate) struct AwsFront<'r> {
    request: AwsRequest<'r>,
    /// Why the body could not be read (413: too large; else broken off).
    body_error: Option<StatusCode>,
    request_id: RequestId,
}

/// What the per-resource faults leave for the service's handler (see [`Ctx`]).
pub(crate) struct Prepared {
    drift: Option<Option<String>>,
    slow_create: Option<Duration>,
    new_id: Option<String>,
}

impl<'r> AwsFront<'r> {
    /// The request `parts` (with `body`) to `service`, and its request ID.
    pub(crate) fn new(
        cloud: &MockCloud,
        service: Service,
        parts: &'r http::request::Parts,
        body: Result<Bytes, StatusCode>,
    ) -> AwsFront<'r> {
        let protocol = service.protocol().unwrap_or(Protocol::RestXml);
        let n = cloud.inner.aws.next_request();
        let request_id = RequestId::new(protocol, n ^ cloud.inner.epoch.as_nanosecond() as u64);
        let (body, body_error) = match body {
            Ok(body) => (body, None),
            Err(status) => (Bytes::new(), Some(status)),
        };
        let raw_query = parts.uri.query();
        let query = raw_query
            .map(|q| params::borrowed_pairs(q.as_bytes()))
            .unwrap_or_default();
        let region = sigv4::read(&parts.headers, &query)
            .map_or_else(|_| "us-east-1".to_owned(), |s| s.region.to_owned());
        let authority = parts
            .headers
            .get(http::header::HOST)
            .and_then(|h| h.to_str().ok())
            .or_else(|| parts.uri.authority().map(http::uri::Authority::as_str));
        let request = AwsRequest {
            service,
            protocol,
            method: &parts.method,
            raw_path: parts.uri.path(),
            raw_query,
            query,
            headers: &parts.headers,
            authority,
            body,
            region,
        };
        AwsFront {
            request,
            body_error,
            request_id,
        }
    }

    fn reply(&self) -> Reply<'_> {
        Reply {
            service: self.request.service,
            protocol: self.request.protocol,
            head: *self.request.method == Method::HEAD,
            request_id: &self.request_id,
        }
    }

    fn ctx<'a>(&'a self, cloud: &'a MockCloud, caller: &'a Caller, at: Duration) -> Ctx<'a> {
        Ctx {
            cloud,
            request: &self.request,
            reply: self.reply(),
            caller,
            now: cloud.wall_clock(at),
            drift: None,
            slow_create: None,
            new_id: None,
        }
    }
}

impl<'r> Front for AwsFront<'r> {
    type Routed = Routed;
    type Caller = Caller;
    type Prepared = Prepared;
    type Error = AwsError;

    fn route<'f>(&'f self, outcome: &mut Outcome<'f>) -> Routing<Routed, AwsError> {
        let protocol = self.request.protocol;
        match self.body_error {
            None => {}
            Some(StatusCode::PAYLOAD_TOO_LARGE) => {
                return Routing::Refused(protocol.too_large(crate::MAX_BODY));
            }
            Some(_) => return Routing::Refused(protocol.incomplete_body()),
        }
        match dispatch_route(&self.request) {
            Ok(routed) => {
                outcome.op = Some(routed.op);
                outcome.name = routed.name.clone().into();
                Routing::Routed(routed)
            }
            Err(unrouted) => {
                outcome.op = unrouted.op;
                outcome.name = unrouted.name.into();
                Routing::Held(*unrouted.error)
            }
        }
    }

    fn authenticate<'f>(
        &'f self,
        cloud: &MockCloud,
        routed: Option<&Routed>,
        at: Duration,
        outcome: &mut Outcome<'f>,
    ) -> Result<Caller, AwsError> {
        let caller = auth::authenticate(
            &cloud.inner.aws,
            &self.request,
            routed.is_some_and(|r| r.anonymous),
            cloud.wall_clock(at),
            cloud.inner.config.aws.max_clock_skew,
        )?;
        if let Some(principal) = &caller {
            outcome.account = Some(principal.account.clone());
        }
        Ok(caller)
    }

    fn admit(&self, _: &Caller, _: &Routed) -> Result<(), AwsError> {
        auth::unsupported_streaming(self.request.protocol, &self.request).map_or(Ok(()), Err)
    }

    fn quota(&self, cloud: &MockCloud, caller: &Caller, routed: &Routed) -> Option<Verdict> {
        let principal = caller.as_ref()?;
        let quotas = cloud.inner.quotas.read();
        let quotas = quotas;
        Some(quotas.check_aws(
            &principal.account,
            routed.op,
            routed.class,
            &routed.resource,
        ))
    }

    fn throttle(&self, _: &MockCloud, _: Layer, _: Budget, wait: Duration) -> AwsError {
        self.request.protocol.throttle(wait)
    }

    fn faults(&self, cloud: &MockCloud, routed: &Routed, at: Duration) -> FaultDecision {
        cloud.decide_operation_faults(routed.op, at)
    }

    fn fault(&self, status: StatusCode, code: Option<&str>) -> AwsError {
        self.request.protocol.fault(status, code)
    }

    fn resource_faults<'f>(
        &'f self,
        cloud: &MockCloud,
        caller: &Caller,
        routed: &Routed,
        at: Duration,
        outcome: &mut Outcome<'f>,
    ) -> Result<Prepared, AwsError> {
        let mut ctx = self.ctx(cloud, caller, at);
        if let Err((err, faulted)) = cloud.aws_resource_faults(&mut ctx, routed) {
            if faulted {
                outcome.flags |= FAULT;
            }
            return Err(err);
        }
        if ctx.new_id.is_none() && self.request.service == Service::Ec2 {
            ctx.new_id = ec2::reserve_id(&ctx, routed);
        }
        if let Some(id) = &ctx.new_id {
            outcome.name = id.clone().into();
        }
        Ok(Prepared {
            drift: ctx.drift,
            slow_create: ctx.slow_create,
            new_id: ctx.new_id,
        })
    }

    fn operate<'f>(
        &'f self,
        cloud: &MockCloud,
        caller: &Caller,
        routed: &Routed,
        prepared: Prepared,
        _: Option<Budget>,
        at: Duration,
        outcome: &mut Outcome<'f>,
    ) -> Result<Response<ResponseBody>, AwsError> {
        let ctx = Ctx {
            drift: prepared.drift,
            slow_create: prepared.slow_create,
            new_id: prepared.new_id,
            ..self.ctx(cloud, caller, at)
        };
        let response = dispatch_handle(&ctx, routed)?;
        if caller.is_none() {
            // An anonymous call (web identity) acts as the account of the role it assumed.
            if let Some(account) = sts::assumed_account(&ctx, routed) {
                outcome.account = Some(account);
            }
        }
        Ok(response)
    }

    fn answer(&self, cloud: &MockCloud, error: AwsError) -> Response<ResponseBody> {
        envelope::error(
            &self.reply(),
            &error,
            cloud.inner.config.aws.retry_after_header,
        )
    }
}
