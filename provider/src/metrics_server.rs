//! Serving `/metrics` over HTTP/1.1.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use tokio::net::TcpListener;

use crate::metrics::ProviderMetrics;

/// The answer to one request: `/metrics` in the text format, 404 for anything else.
#[must_use]
pub fn respond(metrics: &ProviderMetrics, path: &str) -> Response<Full<Bytes>> {
    let (status, body) = match path {
        "/metrics" => match metrics.encode() {
            Ok(text) => (StatusCode::OK, text),
            Err(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "cannot encode metrics\n".to_owned(),
            ),
        },
        "/healthz" | "/readyz" => (StatusCode::OK, "ok\n".to_owned()),
        _ => (
            StatusCode::NOT_FOUND,
            "not found; try /metrics\n".to_owned(),
        ),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

/// Serves `/metrics` on `listener` until `shutdown` completes, through the workspace's one
/// accept loop ([`serve::serve`]: accept errors back off instead of spinning; open
/// connections get a second to finish).
pub async fn serve_metrics(
    listener: TcpListener,
    metrics: Arc<ProviderMetrics>,
    shutdown: impl Future<Output = ()>,
) {
    let service = tower::service_fn(move |request: Request<Incoming>| {
        let response = respond(&metrics, request.uri().path());
        async move { Ok::<_, Infallible>(response) }
    });
    let options = serve::Options::default().drain_timeout(Some(Duration::from_secs(1)));
    serve::serve(listener, service, shutdown, options).await;
}
