//! What can go wrong talking to the cloud.

use std::time::Duration;

use tower::BoxError;

/// A failed cloud call. Throttles are errors too: the reconciler hands them to the work
/// queue, whose per-item backoff decides when to try again; the client never retries.
#[derive(Debug, thiserror::Error)]
pub enum CloudError {
    /// 429, or 503 with `Retry-After`: the account's quota is spent.
    #[error("throttled by the cloud (HTTP {status}){}", retry_hint(*.retry_after))]
    Throttled {
        /// 429 or 503.
        status: u16,
        /// The server's `Retry-After`, if it sent one.
        retry_after: Option<Duration>,
    },
    /// Any other answer that is not a success.
    #[error("cloud answered HTTP {status} {code}: {message}")]
    Api {
        /// HTTP status.
        status: u16,
        /// The error envelope's `code` (empty if there was none).
        code: String,
        /// The error envelope's `message`, or the start of the body.
        message: String,
    },
    /// No complete answer within the client's timeout.
    #[error("cloud call timed out after {0:?}")]
    Timeout(Duration),
    /// The request could not be sent or the answer not read.
    #[error("cannot reach the cloud")]
    Transport(#[source] BoxError),
    /// The answer was not the JSON expected.
    #[error("cannot decode the cloud's answer (HTTP {status})")]
    Decode {
        /// HTTP status.
        status: u16,
        /// Why it did not decode.
        #[source]
        source: serde_json::Error,
    },
    /// The request could not be built (a name that is not a URL path segment).
    #[error("cannot build the cloud request for {path:?}")]
    Request {
        /// The path that was refused.
        path: String,
        /// Why.
        #[source]
        source: http::Error,
    },
}

fn retry_hint(retry_after: Option<Duration>) -> String {
    retry_after
        .map(|d| format!("; retry after {}s", d.as_secs()))
        .unwrap_or_default()
}

impl CloudError {
    /// Whether the cloud throttled the call.
    #[must_use]
    pub fn is_throttle(&self) -> bool {
        matches!(self, CloudError::Throttled { .. })
    }

    /// The metric label for the outcome: the HTTP status, or `timeout`, `transport`.
    #[must_use]
    pub fn code_label(&self) -> String {
        match self {
            CloudError::Throttled { status, .. }
            | CloudError::Api { status, .. }
            | CloudError::Decode { status, .. } => status.to_string(),
            CloudError::Timeout(_) => "timeout".to_owned(),
            CloudError::Transport(_) => "transport".to_owned(),
            CloudError::Request { .. } => "invalid_request".to_owned(),
        }
    }
}
