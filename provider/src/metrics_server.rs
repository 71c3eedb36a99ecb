//! Serving `/metrics` over HTTP/1.1.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

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

/// Serves `/metrics` on `listener` until `shutdown` completes.
pub async fn serve_metrics(
    listener: TcpListener,
    metrics: Arc<ProviderMetrics>,
    shutdown: impl Future<Output = ()>,
) {
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::warn!(%error, "metrics: accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let metrics = Arc::clone(&metrics);
        connections.spawn(async move {
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let response = respond(&metrics, request.uri().path());
                async move { Ok::<_, Infallible>(response) }
            });
            if let Err(error) = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(%error, "metrics: connection ended with an error");
            }
        });
    }
    connections.shutdown().await;
}
