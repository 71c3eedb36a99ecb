//! The one request pipeline: every journalled request, of the generic JSON API or of an AWS
//! service, goes through the same steps, and the first failure answers it:
//!
//! 1. **route**: what the request is (its operation, the journal's name), or an error that
//!    answers at once (the generic API's unknown path or method, an AWS body too large) or
//!    is held back until the caller is known (an AWS service's unknown action);
//! 2. **authenticate**: who calls (a bearer token, a SigV4 signature), then what the
//!    caller may not do (another account's resources, a body too large);
//! 3. **quota**: the rate quotas of the caller's account, a throttle in the service's shape
//!    (or, in shadow mode, a flag in the journal);
//! 4. **faults**: the injected latency and errors of the request's class or operation,
//!    then the per-resource faults of the resource it names;
//! 5. **operation**: the service's answer;
//! 6. **journal**: one [`Outcome`] per request becomes one [`Record`] in the journal and
//!    the aggregates, whichever service answered.
//!
//! What differs between services is a [`Front`]: the generic API's (`generic/`) and the
//! AWS services' (`aws/`). The pipeline itself knows neither.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use http::{Response, StatusCode};
use tokio::time::Instant;

use crate::cloud::MockCloud;
use crate::faults::FaultDecision;
use crate::http::respond::ResponseBody;
use crate::journal::{FAULT, Record, SHADOW_THROTTLED, THROTTLED};
use crate::model::{Action, Collection};
use crate::quota::{Budget, Layer, Verdict};
use crate::service::Operation;

/// What `route` makes of a request.
pub(crate) enum Routing<R, E> {
    /// The request is understood.
    Routed(R),
    /// Not understood; the error answers once the caller is authenticated (so an
    /// unauthenticated caller learns nothing about operations).
    Held(E),
    /// Not understood; the error answers at once, no one authenticated.
    Refused(E),
}

/// What the journal needs to know of a request besides its response, filled in step by
/// step: the same for every service.
#[derive(Debug, Default)]
pub(crate) struct Outcome<'r> {
    /// The authenticated account (shared with the token or the principal: no copy a
    /// request), `None` until the caller is known.
    pub account: Option<Arc<str>>,
    /// The generic API's action and collection (`None` for AWS requests).
    pub action: Option<Action>,
    pub collection: Option<Collection>,
    /// The operation, once routing names it.
    pub op: Option<Operation>,
    /// The resource the journal names.
    pub name: Cow<'r, str>,
    /// The journal's flags (`THROTTLED`, `FAULT`, …).
    pub flags: u8,
    /// The quota layer that throttled (or would have, in shadow mode).
    pub layer: Option<Layer>,
}

/// A service's way through the pipeline: what each step means for its requests. Every
/// method is synchronous; the pipeline alone waits (for an injected latency).
pub(crate) trait Front {
    /// What `route` understood.
    type Routed;
    /// Who called (`authenticate`).
    type Caller;
    /// What the per-resource faults leave for the operation to apply.
    type Prepared;
    /// An error answer, before it is put in the service's envelope by [`Front::answer`].
    type Error;

    /// Step 1: the operation and the journal's name, set in `outcome`.
    fn route<'f>(&'f self, outcome: &mut Outcome<'f>) -> Routing<Self::Routed, Self::Error>;

    /// Step 2: the caller (its account set in `outcome`), with `routed` if routing
    /// understood the request.
    fn authenticate<'f>(
        &'f self,
        cloud: &MockCloud,
        routed: Option<&Self::Routed>,
        at: Duration,
        outcome: &mut Outcome<'f>,
    ) -> Result<Self::Caller, Self::Error>;

    /// Step 2, once routed and authenticated: what this caller may not do.
    fn admit(&self, caller: &Self::Caller, routed: &Self::Routed) -> Result<(), Self::Error>;

    /// Step 3: the rate-quota verdict, or `None` if no account is charged (an anonymous
    /// call).
    fn quota(
        &self,
        cloud: &MockCloud,
        caller: &Self::Caller,
        routed: &Self::Routed,
    ) -> Option<Verdict>;

    /// Step 3: the answer to a throttled request.
    fn throttle(
        &self,
        cloud: &MockCloud,
        layer: Layer,
        budget: Budget,
        wait: Duration,
    ) -> Self::Error;

    /// Step 4: the injected latency and error of the request.
    fn faults(&self, cloud: &MockCloud, routed: &Self::Routed, at: Duration) -> FaultDecision;

    /// Step 4: the answer to an injected error.
    fn fault(&self, status: StatusCode, code: Option<&str>) -> Self::Error;

    /// Step 4: the per-resource faults of the resource the request names: an answer (a
    /// lasting error, flagged in `outcome`), or what the operation applies.
    fn resource_faults<'f>(
        &'f self,
        cloud: &MockCloud,
        caller: &Self::Caller,
        routed: &Self::Routed,
        at: Duration,
        outcome: &mut Outcome<'f>,
    ) -> Result<Self::Prepared, Self::Error>;

    /// Step 5: the operation's answer; `budget` is the quota's bucket after this request.
    #[allow(clippy::too_many_arguments)]
    fn operate<'f>(
        &'f self,
        cloud: &MockCloud,
        caller: &Self::Caller,
        routed: &Self::Routed,
        prepared: Self::Prepared,
        budget: Option<Budget>,
        at: Duration,
        outcome: &mut Outcome<'f>,
    ) -> Result<Response<ResponseBody>, Self::Error>;

    /// An error in the service's envelope.
    fn answer(&self, cloud: &MockCloud, error: Self::Error) -> Response<ResponseBody>;
}

impl MockCloud {
    /// Answers a request through `front`'s steps and journals it.
    pub(crate) async fn pipeline<F: Front>(
        &self,
        front: F,
        arrived: Instant,
    ) -> Response<ResponseBody> {
        let at = self.inner.clock.since_epoch(arrived);
        let mut outcome = Outcome::default();
        let response = match self.steps(&front, at, &mut outcome).await {
            Ok(response) => response,
            Err(err) => front.answer(self, err),
        };
        self.journal(at, arrived, &outcome, &response);
        response
    }

    async fn steps<'f, F: Front>(
        &self,
        front: &'f F,
        at: Duration,
        outcome: &mut Outcome<'f>,
    ) -> Result<Response<ResponseBody>, F::Error> {
        let routed = match front.route(outcome) {
            Routing::Routed(routed) => Ok(routed),
            Routing::Held(err) => Err(err),
            Routing::Refused(err) => return Err(err),
        };
        let caller = front.authenticate(self, routed.as_ref().ok(), at, outcome)?;
        let routed = routed?;
        front.admit(&caller, &routed)?;

        let mut budget = None;
        match front.quota(self, &caller, &routed) {
            None => {}
            Some(Verdict::Admit { budget: admitted }) => budget = admitted,
            Some(Verdict::Throttle {
                layer,
                budget,
                wait,
            }) => {
                outcome.layer = Some(layer);
                if !self.inner.config.shadow {
                    outcome.flags |= THROTTLED;
                    return Err(front.throttle(self, layer, budget, wait));
                }
                outcome.flags |= SHADOW_THROTTLED;
            }
        }

        let faults = front.faults(self, &routed, at);
        if !faults.latency.is_zero() {
            tokio::time::sleep(faults.latency).await;
        }
        if let Some(status) = faults.error {
            outcome.flags |= FAULT;
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
            return Err(front.fault(status, faults.code.as_deref()));
        }
        let prepared = front.resource_faults(self, &caller, &routed, at, outcome)?;

        front.operate(self, &caller, &routed, prepared, budget, at, outcome)
    }

    /// Step 6: the journal entry of a request that arrived at `at` (`arrived`) and was
    /// answered with `response`.
    pub(crate) fn journal(
        &self,
        at: Duration,
        arrived: Instant,
        outcome: &Outcome<'_>,
        response: &Response<ResponseBody>,
    ) {
        let status = response.status().as_u16();
        let record = Record {
            at,
            latency: arrived.elapsed(),
            account: outcome.account.as_deref().unwrap_or_default(),
            action: outcome.action,
            collection: outcome.collection,
            operation: outcome.op,
            name: &outcome.name,
            status,
            flags: outcome.flags,
            retry_after_ms: crate::journal::retry_hint_ms(status, response.headers()),
        };
        let seq = self.record(&record, outcome.layer);
        tracing::trace!(
            seq,
            status,
            account = record.account,
            service = outcome.op.map_or("", |op| op.service().as_str()),
            operation = outcome.op.map_or("", Operation::name),
            "call"
        );
    }
}
