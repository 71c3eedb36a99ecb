//! An in-process transport for the SDK clients: every request goes to a tower `Service`
//! (mock-cloud's, in the harness's embedded stack and the tests) instead of a socket, so the
//! AWS kinds run where the rest of the provider does, on tokio's paused clock too.

use std::fmt;

use aws_smithy_runtime_api::client::http::{
    HttpConnector, HttpConnectorFuture, SharedHttpClient, SharedHttpConnector, http_client_fn,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_types::body::SdkBody;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use tower::{BoxError, Service, ServiceExt};

/// A request body the in-process transport cannot send.
#[derive(Debug, thiserror::Error)]
#[error("the in-process transport sends in-memory request bodies only, and this one streams")]
pub struct StreamingBody;

/// An SDK HTTP client that hands every request to `service` in process, such as a
/// `mock_cloud::MockCloud` (`tests/it/aws_kinds.rs` runs the AWS kinds so).
pub fn in_process<S>(service: S) -> SharedHttpClient
where
    InProcess<S>: HttpConnector + 'static,
{
    let connector = SharedHttpConnector::new(InProcess { service });
    http_client_fn(move |_, _| connector.clone())
}

/// The connector of [`in_process`]: a tower `Service` of `http` requests with in-memory
/// bodies, shared by every request (each call clones it).
pub struct InProcess<S> {
    service: S,
}

impl<S> fmt::Debug for InProcess<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("InProcess")
    }
}

impl<S, B> HttpConnector for InProcess<S>
where
    S: Service<http::Request<Full<Bytes>>, Response = http::Response<B>>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let service = self.service.clone();
        HttpConnectorFuture::new(async move {
            let request = request
                .try_into_http1x()
                .map_err(|e| ConnectorError::other(e.into(), None))?;
            let (parts, body) = request.into_parts();
            let bytes = body
                .bytes()
                .map(Bytes::copy_from_slice)
                .ok_or_else(|| ConnectorError::other(StreamingBody.into(), None))?;
            let request = http::Request::from_parts(parts, Full::new(bytes));
            let response = service
                .oneshot(request)
                .await
                .map_err(|e| ConnectorError::io(e.into()))?;
            let (parts, body) = response.into_parts();
            let bytes = body
                .collect()
                .await
                .map_err(|e| ConnectorError::io(e.into()))?
                .to_bytes();
            HttpResponse::try_from(http::Response::from_parts(parts, SdkBody::from(bytes)))
                .map_err(|e| ConnectorError::other(e.into(), None))
        })
    }
}
