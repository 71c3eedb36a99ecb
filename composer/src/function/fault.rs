//! [`Faulty`]: a function with faults added, for tests and scenarios: latency, a FATAL
//! result, a function that never answers, and a TTL override.

use std::time::Duration;

use super::proto::{ResponseMeta, RunFunctionRequest, RunFunctionResponse};
use super::response;
use super::runner::BoxFuture;
use super::service::Function;
use super::value::to_duration;

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
                Some(Fault::Fatal(message)) => response::fatal(request, message),
                None => self.inner.run_function(request).await?,
            };
            if let Some(ttl) = self.ttl {
                response.meta.get_or_insert_with(ResponseMeta::default).ttl =
                    Some(to_duration(ttl));
            }
            Ok(response)
        })
    }
}
