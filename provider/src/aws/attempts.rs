//! Each HTTP attempt an SDK client sends, counted in `provider_cloud_requests_total` as the
//! generic kinds' calls are, so that the provider's own count can be set beside the cloud's
//! journal for the AWS kinds too.
//!
//! # Semantics
//! - One count per attempt that reached the HTTP client: an SDK retry is a second count, as
//!   the cloud sees a second request; an attempt that failed before it was sent (signing,
//!   endpoint resolution, the retry quota) is none.
//! - `action` is the SDK's operation name (`HeadBucket`, `GetCallerIdentity`, …); `code`
//!   is the answer's HTTP status, or `timeout` or `transport` when none came, as
//!   [`crate::cloud::CloudClient`] labels its own calls.

use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::{
    BeforeTransmitInterceptorContextRef, FinalizerInterceptorContextRef,
};
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::{ConfigBag, Storable, StoreReplace};

use crate::cloud::{CloudRequestLabels, CloudRequests};

/// The SDK interceptor that counts attempts into a provider's cloud-request counter.
#[derive(Clone, Debug)]
pub struct CountAttempts {
    requests: CloudRequests,
}

impl CountAttempts {
    /// Counts into `requests`.
    #[must_use]
    pub fn new(requests: CloudRequests) -> Self {
        CountAttempts { requests }
    }
}

/// Marks an attempt that went to the HTTP client, until its end is counted.
#[derive(Clone, Debug)]
struct Sent;

impl Storable for Sent {
    type Storer = StoreReplace<Self>;
}

impl Intercept for CountAttempts {
    fn name(&self) -> &'static str {
        "CountAttempts"
    }

    fn read_before_transmit(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        cfg.interceptor_state().store_put(Sent);
        Ok(())
    }

    fn read_after_attempt(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if cfg.load::<Sent>().is_none() {
            return Ok(());
        }
        cfg.interceptor_state().unset::<Sent>();
        let code = match context.response() {
            Some(response) => response.status().as_u16().to_string(),
            None => {
                let timeout = context
                    .output_or_error()
                    .and_then(Result::err)
                    .is_some_and(|e| {
                        e.is_timeout_error()
                            || e.as_connector_error().is_some_and(|c| c.is_timeout())
                    });
                (if timeout { "timeout" } else { "transport" }).to_owned()
            }
        };
        let action = cfg
            .load::<Metadata>()
            .map_or_else(|| "unknown".to_owned(), |m| m.name().to_owned());
        self.requests
            .get_or_create(&CloudRequestLabels { action, code })
            .inc();
        Ok(())
    }
}
