//! [`InProcessRunner`]: calls a function through its gRPC service in the same process, with
//! no socket, so a run on tokio's paused clock can call functions.

use std::sync::Arc;

use tokio::time::Instant;

use super::metrics::FunctionMetrics;
use super::proto::RunFunctionRequest;
use super::runner::{self, CallSettings, FunctionRunner, RunFuture};
use super::service::{Function, FunctionService};

/// Calls one [`Function`] in process, over the real protocol: the request is encoded,
/// framed and decoded by the same gRPC client and server that run over a socket, but the
/// client's transport is the [`FunctionService`] itself.
///
/// # Semantics
/// - Nothing here reads the clock but the deadline, so on paused time a call costs no
///   virtual time beyond the function's own sleeps.
/// - The 4 MiB limits apply as over a socket ([`runner::MAX_MESSAGE_SIZE`]).
pub struct InProcessRunner<F: ?Sized> {
    service: FunctionService<F>,
    settings: CallSettings,
}

impl<F: Function> InProcessRunner<F> {
    /// Calls `function`.
    pub fn new(function: F) -> Self {
        InProcessRunner::from_service(FunctionService::new(function))
    }
}

impl<F: Function + ?Sized> InProcessRunner<F> {
    /// Calls the function behind `service` (for instance one that serves only `v1beta1`).
    pub fn from_service(service: FunctionService<F>) -> Self {
        InProcessRunner {
            service,
            settings: CallSettings::default(),
        }
    }

    /// Counts every gRPC call in `metrics`.
    #[must_use]
    pub fn metrics(mut self, metrics: Arc<FunctionMetrics>) -> Self {
        self.settings.metrics = Some(metrics);
        self
    }

    /// Accepts responses up to `bytes` (default 4 MiB).
    #[must_use]
    pub fn max_response_size(mut self, bytes: usize) -> Self {
        self.settings.max_response_size = bytes;
        self
    }
}

impl<F: Function + ?Sized> FunctionRunner for InProcessRunner<F> {
    fn run<'a>(
        &'a self,
        name: &'a str,
        request: RunFunctionRequest,
        deadline: Instant,
    ) -> RunFuture<'a> {
        let started = Instant::now();
        Box::pin(runner::call(
            self.service.clone(),
            &self.settings,
            name,
            request,
            started,
            deadline,
        ))
    }
}
