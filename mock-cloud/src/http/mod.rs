//! The HTTP face of [`MockCloud`]: one `handle` function and a tower `Service` around it.

mod admin;
mod api;
mod input;
mod metrics;
pub(crate) mod respond;
mod route;
mod switch;

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body::Body;
use http_body_util::{BodyExt, Limited};
use tokio::time::Instant;

pub use api::MAX_BODY;
pub use respond::ResponseBody;
pub use switch::Switchable;

use crate::cloud::MockCloud;
use route::Route;

/// The error type request bodies may have.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl MockCloud {
    /// Answers one HTTP request. Never fails and never panics: every problem is an HTTP
    /// status. AWS requests (signed with SigV4, or unsigned STS form posts) go to their
    /// service; API requests (`/v1/...`, including unknown paths) to the generic API; both
    /// are journalled. Admin requests (`/admin/v1/...`, `/metrics`) are not.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// use http_body_util::Full;
    /// let cloud = mock_cloud::MockCloud::new(mock_cloud::Config::default()).unwrap();
    /// let request = http::Request::get("/v1/accounts/default/buckets/b1")
    ///     .header("authorization", "Bearer default")
    ///     .body(Full::new(bytes::Bytes::new()))
    ///     .unwrap();
    /// let response = cloud.handle(request).await;
    /// assert_eq!(response.status(), 404);
    /// assert_eq!(cloud.calls()[0].status, 404);
    /// # });
    /// ```
    pub async fn handle<B>(&self, request: Request<B>) -> Response<ResponseBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        let arrived = Instant::now();
        let (parts, body) = request.into_parts();
        let path = parts.uri.path();
        let query = parts.uri.query();
        let route = route::route(path);
        if !matches!(route, Route::Metrics | Route::Admin(_)) {
            match crate::aws::route::destination(&parts) {
                crate::aws::route::Destination::NotAws => {}
                crate::aws::route::Destination::Service(service) => {
                    let body = read_body(body, &parts.headers).await;
                    return self.aws(service, &parts, body, arrived).await;
                }
                crate::aws::route::Destination::UnknownService(name) => {
                    let message = format!("mock-cloud does not speak the AWS service `{name}`");
                    let response =
                        respond::error(StatusCode::BAD_REQUEST, "UnknownService", &message);
                    self.record_unrouted(arrived, &name, &response);
                    return response;
                }
            }
        }
        let wants_body = matches!(parts.method, Method::POST | Method::PUT | Method::PATCH);
        let body = if wants_body {
            read_body(body, &parts.headers).await
        } else {
            Ok(Bytes::new())
        };
        match route {
            Route::Metrics if parts.method == Method::GET => self.metrics_response(),
            Route::Metrics => respond::method_not_allowed("GET"),
            Route::Admin(path) => self.admin(path, &parts.method, query, body),
            Route::NotFound => {
                let response = respond::error(StatusCode::NOT_FOUND, "NotFound", "unknown path");
                self.record_unrouted(arrived, "", &response);
                response
            }
            Route::Api {
                account,
                collection,
                name,
            } => {
                let request = api::ApiRequest {
                    method: &parts.method,
                    headers: &parts.headers,
                    query,
                    account,
                    collection,
                    name,
                    body,
                };
                self.api(request, arrived).await
            }
        }
    }
}

/// Reads a body of at most [`MAX_BODY`] bytes: 413 if longer, 400 if it breaks off.
async fn read_body<B>(body: B, headers: &http::HeaderMap) -> Result<Bytes, StatusCode>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(StatusCode::PAYLOAD_TOO_LARGE);
    }
    match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(err) if err.is::<http_body_util::LengthLimitError>() => {
            Err(StatusCode::PAYLOAD_TOO_LARGE)
        }
        Err(_) => Err(StatusCode::BAD_REQUEST),
    }
}

/// The cloud as a tower `Service`: clone it freely, every clone shares the state.
impl<B> tower::Service<Request<B>> for MockCloud
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<ResponseBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let cloud = self.clone();
        Box::pin(async move { Ok(cloud.handle(request).await) })
    }
}

impl MockCloud {
    /// Journals a request that matched no service: no account, no operation.
    fn record_unrouted(&self, arrived: Instant, name: &str, response: &Response<ResponseBody>) {
        let record = crate::journal::Record {
            at: self.inner.clock.since_epoch(arrived),
            latency: arrived.elapsed(),
            account: "",
            action: None,
            collection: None,
            operation: None,
            name,
            status: response.status().as_u16(),
            flags: 0,
            retry_after_ms: 0,
        };
        self.record(&record, None);
    }
}
