//! [`Faulty`]: a function with faults added, for tests and scenarios: latency, a FATAL
//! result, a function that never answers, and a TTL override.

use std::time::Duration;

use super::proto::{
    ResponseMeta, Result as FnResult, RunFunctionRequest, RunFunctionResponse, Severity,
};
use super::runner::BoxFuture;
use super::service::Function;

/// What a [`Faulty`] function answers instead of its inner function's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// A response that passes the request's desired state and context through, with one
    /// FATAL result carrying this message (the inner function is not called).
    Fatal(String),
    /// No answer, ever: the caller's deadline ends the call.
    Down,
}

/// Wraps a function with faults.
///
/// # Semantics
/// Each call first sleeps the latency on tokio's clock (so on paused time it advances
/// virtual time by exactly that much), then applies the fault if any, else calls the inner
/// function and, with a TTL override, replaces `meta.ttl` in its response.
pub struct Faulty<F> {
    inner: F,
    latency: Duration,
    fault: Option<Fault>,
    ttl: Option<Duration>,
}

impl<F: Function> Faulty<F> {
    /// `inner` with no fault yet.
    pub fn new(inner: F) -> Self {
        Faulty {
            inner,
            latency: Duration::ZERO,
            fault: None,
            ttl: None,
        }
    }

    /// Answers `latency` later.
    #[must_use]
    pub fn latency(mut self, latency: Duration) -> Self {
        self.latency = latency;
        self
    }

    /// Answers with `fault`.
    #[must_use]
    pub fn fault(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }

    /// Answers with a FATAL result carrying `message`.
    #[must_use]
    pub fn fatal(self, message: impl Into<String>) -> Self {
        self.fault(Fault::Fatal(message.into()))
    }

    /// Never answers.
    #[must_use]
    pub fn down(self) -> Self {
        self.fault(Fault::Down)
    }

    /// Replaces the TTL of every response with `ttl`.
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }
}

impl<F: Function> Function for Faulty<F> {
    fn run_function(
        &self,
        request: RunFunctionRequest,
    ) -> BoxFuture<'_, Result<RunFunctionResponse, tonic::Status>> {
        Box::pin(async move {
            if !self.latency.is_zero() {
                tokio::time::sleep(self.latency).await;
            }
            let mut response = match &self.fault {
                Some(Fault::Down) => std::future::pending().await,
                Some(Fault::Fatal(message)) => fatal_response(request, message),
                None => self.inner.run_function(request).await?,
            };
            if let Some(ttl) = self.ttl {
                response.meta.get_or_insert_with(ResponseMeta::default).ttl = Some(duration(ttl));
            }
            Ok(response)
        })
    }
}

/// A response that passes `request`'s tag, desired state and context through, with one
/// FATAL result: what function-sdk-go's `response.Fatal` on `response.To(req)` answers.
#[must_use]
pub fn fatal_response(request: RunFunctionRequest, message: &str) -> RunFunctionResponse {
    RunFunctionResponse {
        meta: Some(ResponseMeta {
            tag: request.meta.map(|m| m.tag).unwrap_or_default(),
            ttl: None,
        }),
        desired: request.desired,
        context: request.context,
        results: vec![FnResult {
            severity: Severity::Fatal as i32,
            message: message.to_owned(),
            reason: None,
            target: None,
        }],
        ..RunFunctionResponse::default()
    }
}

/// A `google.protobuf.Duration` from a `std` duration (saturating at `i64::MAX` seconds).
#[must_use]
pub fn duration(d: Duration) -> prost_types::Duration {
    prost_types::Duration {
        seconds: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        nanos: i32::try_from(d.subsec_nanos()).unwrap_or(0),
    }
}
