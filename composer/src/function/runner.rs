//! [`FunctionRunner`], what the composite reconciler calls, and the one gRPC call that its
//! implementations share.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use http::uri::PathAndQuery;
use prost::Message;
use tokio::time::Instant;
use tonic::body::Body;
use tonic::client::Grpc;
use tower::ServiceExt;

use super::codec::EncodedCodec;
use super::error::{BoxError, FunctionError};
use super::metrics::FunctionMetrics;
use super::proto::{
    RUN_FUNCTION_V1, RUN_FUNCTION_V1BETA1, RunFunctionRequest, RunFunctionResponse,
};
use super::sanitize::without_status_details;

/// A boxed, sendable future: what [`FunctionRunner`] and [`crate::function::Function`]
/// return, so that both can be trait objects.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// gRPC's default limit on a received message, which function-sdk-go and core keep: 4 MiB.
pub const MAX_MESSAGE_SIZE: usize = 4 * 1024 * 1024;

/// What [`FunctionRunner::run`] returns: the call's future, answering the function's
/// response or why there is none.
pub type RunFuture<'a> = BoxFuture<'a, Result<RunFunctionResponse, FunctionError>>;

/// Runs composition functions: core's `FunctionRunner` (`internal/xfn`).
///
/// # Semantics
/// - `name` is the function's name (a `Function` object's); implementations that serve one
///   function use it only in errors.
/// - `deadline` bounds the whole call, waiting for the function included. Core gives one
///   deadline to a whole reconcile (2 minutes), shared by every step; the caller passes it
///   to each call.
/// - A response with a FATAL result is `Ok`: results are the pipeline's to judge.
pub trait FunctionRunner: Send + Sync {
    /// Calls function `name` with `request`, giving up at `deadline`.
    fn run<'a>(
        &'a self,
        name: &'a str,
        request: RunFunctionRequest,
        deadline: Instant,
    ) -> RunFuture<'a>;
}

/// Message size limits of a client, and where it counts its calls.
#[derive(Clone, Debug)]
pub(crate) struct CallSettings {
    /// The largest response accepted.
    pub max_response_size: usize,
    /// The largest request sent.
    pub max_request_size: usize,
    /// Core's function metrics, if kept.
    pub metrics: Option<Arc<FunctionMetrics>>,
}

impl Default for CallSettings {
    fn default() -> Self {
        CallSettings {
            max_response_size: MAX_MESSAGE_SIZE,
            max_request_size: MAX_MESSAGE_SIZE,
            metrics: None,
        }
    }
}

impl CallSettings {
    /// Counts one gRPC call of `method`, begun at `began`, that ended in `outcome`.
    pub(crate) fn record(
        &self,
        name: &str,
        method: &'static str,
        outcome: Result<&RunFunctionResponse, &FunctionError>,
        began: Instant,
    ) {
        if let Some(metrics) = &self.metrics {
            metrics.request(name, method);
            metrics.response(name, method, outcome, began.elapsed());
        }
    }
}

/// One `RunFunction` over `transport`, begun at `started`, by `deadline`.
///
/// v1 first; when the function answers `UNIMPLEMENTED`, the same request again as v1beta1.
/// Like core's `BetaFallBackFunctionRunnerServiceClient`, nothing is remembered: every call
/// to a v1beta1-only function costs two gRPC calls.
pub(crate) async fn call<T, B>(
    transport: T,
    settings: &CallSettings,
    name: &str,
    request: RunFunctionRequest,
    started: Instant,
    deadline: Instant,
) -> Result<RunFunctionResponse, FunctionError>
where
    T: tower::Service<http::Request<Body>, Response = http::Response<B>> + Clone + Send,
    T::Error: Into<BoxError>,
    T::Future: Send,
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    // A status in the response's headers (a trailers-only response) is the server's own:
    // it refused the call before answering. Any other error status arose here, reading the
    // answer (its size, its bytes), or in its trailers.
    let trailers_only = Arc::new(AtomicBool::new(false));
    let seen = trailers_only.clone();
    let transport = transport.map_response(move |response: http::Response<B>| {
        if response.headers().contains_key("grpc-status") {
            seen.store(true, Ordering::Relaxed);
        }
        without_status_details(response)
    });
    // The request is encoded once: the v1 attempt and a v1beta1 fallback send the same
    // bytes (a copy of the message for the fallback cost more than its encoding).
    let request = bytes::Bytes::from(request.encode_to_vec());
    // tonic checks the size while streaming the request body, where a failure becomes a
    // reset stream and loses its reason; so the size is checked here, before sending.
    let size = request.len();
    if size > settings.max_request_size {
        let status = tonic::Status::out_of_range(format!(
            "Error, encoded message length too large: found {size} bytes, the limit is: {} bytes",
            settings.max_request_size
        ));
        let error = FunctionError::from_status(name, status, false);
        // Core would have sent it, and the function refused it: one call either way.
        settings.record(name, RUN_FUNCTION_V1, Err(&error), started);
        return Err(error);
    }
    let mut grpc = Grpc::new(transport).max_decoding_message_size(settings.max_response_size);
    let mut v1beta1 = false;
    let mut began = started;
    loop {
        let method = if v1beta1 {
            RUN_FUNCTION_V1BETA1
        } else {
            RUN_FUNCTION_V1
        };
        let mut call = tonic::Request::new(request.clone());
        // grpc-timeout, as a Go client sends its context's deadline.
        call.set_timeout(deadline.saturating_duration_since(Instant::now()));
        trailers_only.store(false, Ordering::Relaxed);
        let answer = async {
            grpc.ready()
                .await
                .map_err(|e| tonic::Status::from_error(e.into()))?;
            grpc.unary(
                call,
                PathAndQuery::from_static(method),
                EncodedCodec::<RunFunctionResponse>::default(),
            )
            .await
        };
        let outcome = match tokio::time::timeout_at(deadline, answer).await {
            Ok(Ok(response)) => Ok(response.into_inner()),
            Ok(Err(status)) => {
                let from_server = trailers_only.load(Ordering::Relaxed);
                Err(FunctionError::from_status(name, status, from_server))
            }
            Err(_) => Err(FunctionError::DeadlineExceeded {
                function: name.to_owned(),
                waited: started.elapsed(),
                last_connect_error: None,
            }),
        };
        settings.record(name, method, outcome.as_ref(), began);
        match outcome {
            Err(FunctionError::Status { status, .. })
                if status.code() == tonic::Code::Unimplemented && !v1beta1 =>
            {
                tracing::debug!(function = name, "v1 unimplemented; trying v1beta1");
                v1beta1 = true;
                began = Instant::now();
            }
            Ok(response) => {
                tracing::debug!(function = name, v1beta1, elapsed = ?started.elapsed(), "function answered");
                return Ok(response);
            }
            Err(error) => {
                tracing::debug!(function = name, %error, elapsed = ?started.elapsed(), "function call failed");
                return Err(error);
            }
        }
    }
}
