//! The AWS face of the cloud: requests signed with SigV4 (or unsigned STS web-identity
//! calls), routed to their service by the credential scope's service name, answered in the
//! service's own protocol, and journalled like every other call.
//!
//! # The pipeline
//! AWS requests go through the cloud's one pipeline (`pipeline.rs`), as the generic API's
//! do; [`front::AwsFront`] says what its steps mean here, and the first failure answers:
//! 1. the service: the SigV4 credential scope's service name ([`route::destination`]);
//! 2. route: the body, read up to [`crate::MAX_BODY`] (too large or broken off: the
//!    service's error, at once), then the service's `route` function names the operation,
//!    its quota class, the resource it addresses and the journal's name, or an error in
//!    the service's envelope (unknown action, missing parameter), held back until the
//!    caller is known;
//! 3. authenticate ([`auth`]): SigV4 verified against the key's secret;
//! 4. quota: the rate quotas of the account, service, class and operation (a throttle in
//!    the protocol's shape, or a shadow record);
//! 5. faults: those of the operation (latency, injected errors, outages), then the
//!    per-resource faults of the resource it names;
//! 6. operation: the service's `handle` function;
//! 7. journal: the same record as every other call's.
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
//! 3. **Dispatch**: one arm in [`dispatch_route`] and one in [`dispatch_handle`] (and in
//!    `dispatch_facts` if per-resource faults read its resources).
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
pub(crate) mod front;
pub(crate) mod params;
mod protocol_errors;
mod resource_faults;
pub(crate) mod route;
mod s3;
pub(crate) mod signing;
pub(crate) mod sigv4;
pub(crate) mod state;
mod sts;
pub(crate) mod xml;

use std::time::Duration;

use http::{Response, StatusCode};
use jiff::Timestamp;

use self::contract::{AwsRequest, Ctx, Routed, Unrouted};
use self::envelope::AwsError;
use crate::cloud::MockCloud;
use crate::http::respond::ResponseBody;
use crate::service::Service;

fn dispatch_route(request: &AwsRequest<'_>) -> Result<Routed, Unrouted> {
    match request.service {
        Service::S3 => s3::route(request),
        Service::Sts => sts::route(request),
        Service::DynamoDb => dynamodb::route(request),
        Service::Ec2 => ec2::route(request),
        // The generic API's requests have a front of their own (`generic/`); a request
        // for it that came here is at an unknown path.
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
    pub(super) fn aws_resource_faults(
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

impl MockCloud {
    /// The cloud's wall-clock time: its epoch plus its clock.
    pub(crate) fn wall_clock(&self, at: Duration) -> Timestamp {
        let at = jiff::SignedDuration::try_from(at).unwrap_or(jiff::SignedDuration::MAX);
        self.inner
            .epoch
            .saturating_add(at)
            .unwrap_or(self.inner.epoch)
    }
}
