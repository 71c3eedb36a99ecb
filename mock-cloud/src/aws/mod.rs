//! The AWS face of the cloud: requests signed with SigV4 (or unsigned STS web-identity
//! calls), routed to their service by the credential scope's service name, answered in the
//! service's own protocol, and journalled like every other call.
//!
//! # The pipeline
//! Every AWS request goes through the same steps, and the first failure answers it:
//! 1. the service: the SigV4 credential scope's service name ([`route::service_of`]);
//! 2. the body, read up to [`crate::MAX_BODY`] (too large or broken off: the service's
//!    error);
//! 3. the operation: the service's `route` function names it, its quota class, the
//!    resource it addresses and the journal's name, or an error in the service's envelope
//!    (unknown action, missing parameter), held back until the caller is known;
//! 4. authentication ([`auth`]): SigV4 verified against the key's secret;
//! 5. the rate quotas of the account, service, class and operation (a throttle in the
//!    protocol's shape, or a shadow record);
//! 6. the faults of the operation (latency, injected errors, outages);
//! 7. the service's `handle` function.
//!
//! # Adding a service
//! A service touches the framework in five places, none of them inside the pipeline:
//! 1. **The catalog** (`service.rs`): declare its operations with `operations!` (variants
//!    named as on the wire, `CreateVpc`) and a `From<…Operation> for Operation`; add a
//!    [`Service`] variant, its entry in `Service::ALL` and its row in `ROWS` (name, SigV4
//!    signing name, [`Protocol`], operations, quota classes, the XML namespace of a query
//!    protocol's answers, the `__type` prefix of a JSON protocol's errors).
//! 2. **Its module** `aws/<service>.rs` (or a folder) with two functions, on the types of
//!    `aws/contract.rs` (import them from there, not from this pipeline):
//!    - `route(&AwsRequest) -> Result<Routed, Unrouted>` reads the request (its method,
//!      path and query; `Action` of a query protocol's form body; `X-Amz-Target` of a JSON
//!      protocol) and names the [`Operation`], its quota class (an index into
//!      [`Service::classes`]), the resource of per-resource quotas and the journal's name.
//!      It runs before authentication and must not touch state. A request it cannot route
//!      is an [`Unrouted`] with the service's error (`Protocol::unknown_operation`,
//!      `MissingParameter`, …), answered only once the caller is authenticated.
//!    - `handle(&Ctx, &Routed) -> Result<Response, AwsError>` answers an authenticated,
//!      admitted request. Answers go out through [`envelope::respond`] (the protocol's
//!      request-id headers); errors are [`AwsError`]s, which the pipeline puts in the
//!      protocol's envelope (see [`envelope::error`]). [`Ctx::now`] is the cloud's wall
//!      clock (its epoch plus its tokio clock), so paused-time tests drive expiries and
//!      provisioning.
//! 3. **Dispatch**: one arm in [`dispatch_route`] and one in [`dispatch_handle`].
//! 4. **State**, if it keeps any: a field of `AwsState` in `aws/state.rs` (behind its own lock),
//!    cleared in `AwsState::reset`.
//! 5. **Tests** with the real SDK client in `sdk-tests/tests/it/aws_<service>.rs` (the crate
//!    `mock-cloud-sdk-tests`, so that mock-cloud's own tests build no SDK client).
//!
//! What every service gets without code of its own: SigV4 verification and the
//! authentication errors of its protocol, the rate quotas of its classes and operations
//! (configured under `quotas.services.<name>`), faults per operation
//! (`faults.services.<name>`), throttles and injected errors in its envelope, and the
//! journal, summary and metrics per operation.
//!
//! Protocol helpers: [`envelope`] (errors of every protocol: `Protocol::throttle`,
//! `unknown_access_key`, `signature_mismatch`, `skewed`, `unknown_operation`, `too_large`,
//! `fault`…; request IDs), [`params`] (form and query pairs), [`xml`] (escaping, and
//! reading bodies into elements).

pub(crate) mod accounts;
pub(crate) mod auth;
pub(crate) mod contract;
mod dynamodb;
mod ec2;
pub(crate) mod envelope;
pub(crate) mod params;
mod resource_faults;
pub(crate) mod route;
mod s3;
pub(crate) mod sigv4;
pub(crate) mod state;
mod sts;
pub(crate) mod xml;

use std::time::Duration;

use bytes::Bytes;
use http::{Method, Response, StatusCode};
use jiff::Timestamp;
use tokio::time::Instant;

use self::contract::{AwsRequest, Ctx, Routed, Unrouted};
use self::envelope::{AwsError, Reply, RequestId};
use crate::cloud::MockCloud;
use crate::http::respond::ResponseBody;
use crate::journal::{FAULT, Record, SHADOW_THROTTLED, THROTTLED};
use crate::quota::{Layer, Verdict};
use crate::service::{Operation, Protocol, Service};

fn dispatch_route(request: &AwsRequest<'_>) -> Result<Routed, Unrouted> {
    match request.service {
        Service::S3 => s3::route(request),
        Service::Sts => sts::route(request),
        Service::DynamoDb => dynamodb::route(request),
        Service::Ec2 => ec2::route(request),
        Service::Generic => Err(Unrouted::new(AwsError::new(
            StatusCode::NOT_FOUND,
            "NotFound",
            "unknown path",
        ))),
    }
}

fn dispatch_handle(ctx: &Ctx<'_>, routed: &Routed) -> Result<Response<ResponseBody>, AwsError> {
    match ctx.request.service {
        Service::S3 => s3::handle(ctx, routed),
        Service::Sts => sts::handle(ctx, routed),
        Service::DynamoDb => dynamodb::handle(ctx, routed),
        Service::Ec2 => ec2::handle(ctx, routed),
        Service::Generic => Err(AwsError::new(
            StatusCode::NOT_FOUND,
            "NotFound",
            "unknown path",
        )),
    }
}

/// What a service tells the per-resource rules of the resource `name` (see
/// [`resource_faults::Facts`]).
fn dispatch_facts(
    ctx: &Ctx<'_>,
    routed: &Routed,
    name: &str,
    action: crate::model::Action,
    tags: bool,
) -> resource_faults::Facts {
    match ctx.request.service {
        Service::S3 => s3::facts(ctx, routed, name, action, tags),
        Service::DynamoDb => dynamodb::facts(ctx, routed, name, action, tags),
        Service::Ec2 => ec2::facts(ctx, routed, name, action, tags),
        Service::Sts | Service::Generic => resource_faults::Facts::default(),
    }
}

impl MockCloud {
    /// The per-resource faults of the resource the request names: a lasting error or a
    /// read inside NotFound-after-create's window as the answer, otherwise what the
    /// handler applies (drift, a slow create, EC2's reserved VPC ID) set in `ctx`. An
    /// answer comes with whether the journal marks it as a fault (a lasting error).
    fn aws_resource_faults(
        &self,
        ctx: &mut Ctx<'_>,
        routed: &Routed,
    ) -> Result<(), (AwsError, bool)> {
        let Some((rules, seed)) = self.resource_rules() else {
            return Ok(());
        };
        let service = ctx.request.service;
        let (Some(kind), Some((name, action))) = (
            resource_faults::kind(service),
            resource_faults::subject(ctx.request, routed),
        ) else {
            return Ok(());
        };
        let tags = crate::resource_faults::needs_spec(&rules);
        let facts = dispatch_facts(ctx, routed, &name, action, tags);
        let name = facts.new_id.clone().unwrap_or(name);
        if name.is_empty() {
            return Ok(());
        }
        let spec = facts.tags.as_ref().map(resource_faults::tags_as_spec);
        let subject = crate::resource_faults::Subject {
            kind,
            name: &name,
            action,
        };
        let verdict = crate::resource_faults::decide(&rules, seed, &subject, spec.as_ref());
        if let Some((error, code)) = &verdict.lasting
            && resource_faults::applies(service, *error, action)
        {
            let err = resource_faults::lasting_error(
                service,
                *error,
                code.as_deref(),
                &name,
                verdict.retry_after,
            );
            return Err((err, true));
        }
        if let (Some(window), Some(created), Some(not_found)) = (
            verdict.not_found_after_create,
            facts.created,
            facts.not_found,
        ) && action == crate::model::Action::Get
        {
            let window =
                jiff::SignedDuration::try_from(window).unwrap_or(jiff::SignedDuration::MAX);
            if ctx.now < created.saturating_add(window).unwrap_or(Timestamp::MAX) {
                return Err((not_found, false));
            }
        }
        ctx.drift = verdict.drift;
        ctx.slow_create = verdict.slow_create;
        ctx.new_id = facts.new_id;
        Ok(())
    }
}

/// What the journal needs besides the response.
struct Outcome {
    /// The authenticated account (shared with its principal: no copy a request).
    account: Option<std::sync::Arc<str>>,
    op: Option<Operation>,
    name: String,
    flags: u8,
    layer: Option<Layer>,
}

impl MockCloud {
    /// The cloud's wall-clock time: its epoch plus its clock.
    pub(crate) fn wall_clock(&self, at: Duration) -> Timestamp {
        let at = jiff::SignedDuration::try_from(at).unwrap_or(jiff::SignedDuration::MAX);
        self.inner
            .epoch
            .saturating_add(at)
            .unwrap_or(self.inner.epoch)
    }

    /// Answers an AWS request of `service` and journals it.
    pub(crate) async fn aws(
        &self,
        service: Service,
        parts: &http::request::Parts,
        body: Result<Bytes, StatusCode>,
        arrived: Instant,
    ) -> Response<ResponseBody> {
        let at = self.inner.clock.since_epoch(arrived);
        let protocol = service.protocol().unwrap_or(Protocol::RestXml);
        let n = self.inner.aws.next_request();
        let request_id = RequestId::new(protocol, n ^ self.inner.epoch.as_nanosecond() as u64);
        let reply = Reply {
            service,
            protocol,
            head: parts.method == Method::HEAD,
            request_id: &request_id,
        };
        let mut outcome = Outcome {
            account: None,
            op: None,
            name: String::new(),
            flags: 0,
            layer: None,
        };
        let response = match self
            .aws_inner(service, parts, body, at, &reply, &mut outcome)
            .await
        {
            Ok(response) => response,
            Err(err) => envelope::error(&reply, &err, self.inner.config.aws.retry_after_header),
        };
        let record = Record {
            at,
            latency: arrived.elapsed(),
            account: outcome.account.as_deref().unwrap_or_default(),
            action: None,
            collection: None,
            operation: outcome.op,
            name: &outcome.name,
            status: response.status().as_u16(),
            flags: outcome.flags,
            retry_after_ms: crate::journal::retry_hint_ms(
                response.status().as_u16(),
                response.headers(),
            ),
        };
        let seq = self.record(&record, outcome.layer);
        tracing::trace!(seq, status = record.status, service = %service, operation = outcome.op.map_or("", Operation::name), "aws call");
        response
    }

    async fn aws_inner(
        &self,
        service: Service,
        parts: &http::request::Parts,
        body: Result<Bytes, StatusCode>,
        at: Duration,
        reply: &Reply<'_>,
        outcome: &mut Outcome,
    ) -> Result<Response<ResponseBody>, AwsError> {
        let protocol = reply.protocol;
        let body = match body {
            Ok(body) => body,
            Err(StatusCode::PAYLOAD_TOO_LARGE) => return Err(protocol.too_large(crate::MAX_BODY)),
            Err(_) => return Err(protocol.incomplete_body()),
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
        let routed = dispatch_route(&request);
        let anonymous = routed.as_ref().is_ok_and(|r| r.anonymous);
        match &routed {
            Ok(r) => (outcome.op, outcome.name) = (Some(r.op), r.name.clone()),
            Err(u) => (outcome.op, outcome.name) = (u.op, u.name.clone()),
        }
        let now = self.wall_clock(at);
        let caller = auth::authenticate(
            &self.inner.aws,
            &request,
            anonymous,
            now,
            self.inner.config.aws.max_clock_skew,
        )?;
        if let Some(principal) = &caller {
            outcome.account = Some(principal.account.clone());
        }
        let routed = routed.map_err(|u| *u.error)?;
        if let Some(err) = auth::unsupported_streaming(protocol, &request) {
            return Err(err);
        }

        if let Some(principal) = &caller {
            let verdict = self
                .inner
                .quotas
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .check_aws(
                    &principal.account,
                    routed.op,
                    routed.class,
                    &routed.resource,
                );
            if let Verdict::Throttle { layer, wait, .. } = verdict {
                outcome.layer = Some(layer);
                if !self.inner.config.shadow {
                    outcome.flags |= THROTTLED;
                    return Err(protocol.throttle(wait));
                }
                outcome.flags |= SHADOW_THROTTLED;
            }
        }

        let faults = self.decide_operation_faults(routed.op, at);
        if !faults.latency.is_zero() {
            tokio::time::sleep(faults.latency).await;
        }
        if let Some(status) = faults.error {
            outcome.flags |= FAULT;
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
            return Err(protocol.fault(status, faults.code.as_deref()));
        }

        let mut ctx = Ctx {
            cloud: self,
            request: &request,
            reply: *reply,
            caller: &caller,
            now,
            drift: None,
            slow_create: None,
            new_id: None,
        };
        if let Err((err, faulted)) = self.aws_resource_faults(&mut ctx, &routed) {
            if faulted {
                outcome.flags |= FAULT;
            }
            return Err(err);
        }
        if ctx.new_id.is_none() && service == Service::Ec2 {
            ctx.new_id = ec2::reserve_id(&ctx, &routed);
        }
        if let Some(id) = &ctx.new_id {
            outcome.name.clone_from(id);
        }
        let response = dispatch_handle(&ctx, &routed);
        if let (Ok(_), None) = (&response, &caller) {
            // An anonymous call (web identity) acts as the account of the role it assumed.
            if let Some(account) = sts::assumed_account(&ctx, &routed) {
                outcome.account = Some(account);
            }
        }
        response
    }
}
