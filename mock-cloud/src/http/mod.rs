//! The HTTP face of [`MockCloud`]: one `handle` function and a tower `Service` around it.

mod admin;
mod body;
mod metrics;
pub(crate) mod respond;
pub(crate) mod route;
mod switch;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body::Body;
use tokio::time::Instant;

pub(crate) use body::read_body;
pub use body::{BoxError, MAX_BODY};
pub use respond::ResponseBody;
pub use switch::Switchable;

use crate::aws::front::AwsFront;
use crate::aws::route::Destination;
use crate::cloud::MockCloud;
use crate::generic::GenericFront;
use crate::pipeline::Outcome;
use crate::service::Service;
use route::Route;

impl MockCloud {
    /// Answers one HTTP request. Never fails and never panics: every problem is an HTTP
    /// status. AWS requests (signed with SigV4, or unsigned STS form posts) go to their
    /// service, every other request but the admin API's to the generic API (`/v1/...`,
    /// including unknown paths), all through the one pipeline, and all are journalled.
    /// Admin requests (`/admin/v1/...`, `/metrics`) are not.
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
        let route = route::route(parts.uri.path());
        if let Route::Metrics | Route::Admin(_) = route {
            let body = read_wanted_body(&parts, body).await;
            return match route {
                Route::Metrics if parts.method == Method::GET => self.metrics_response(),
                Route::Admin(path) => self.admin(path, &parts.method, parts.uri.query(), body),
                _ => respond::method_not_allowed("GET"),
            };
        }
        let service = match crate::aws::route::destination(&parts) {
            Destination::NotAws => Service::Generic,
            Destination::Service(service) => service,
            Destination::UnknownService(name) => {
                let message = format!("mock-cloud does not speak the AWS service `{name}`");
                let response = respond::error(StatusCode::BAD_REQUEST, "UnknownService", &message);
                let outcome = Outcome {
                    name: name.into(),
                    ..Outcome::default()
                };
                let at = self.inner.clock.since_epoch(arrived);
                self.journal(at, arrived, &outcome, &response);
                return response;
            }
        };
        if service == Service::Generic {
            let front = GenericFront {
                method: &parts.method,
                headers: &parts.headers,
                query: parts.uri.query(),
                route,
                body: read_wanted_body(&parts, body).await,
            };
            return self.pipeline(front, arrived).await;
        }
        let body = read_body(body, &parts.headers).await;
        self.pipeline(AwsFront::new(self, service, &parts, body), arrived)
            .await
    }
}

/// The body of a method that has one (`POST`, `PUT`, `PATCH`); empty for the others.
async fn read_wanted_body<B>(parts: &http::request::Parts, body: B) -> Result<Bytes, StatusCode>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    if matches!(parts.method, Method::POST | Method::PUT | Method::PATCH) {
        read_body(body, &parts.headers).await
    } else {
        Ok(Bytes::new())
    }
}

/// Makes a type with `async fn handle(&self, Request<B>) -> Response<ResponseBody>` a tower
/// `Service`: clone it freely, every clone shares the state.
macro_rules! tower_service {
    ($type:ty) => {
        impl<B> tower::Service<Request<B>> for $type
        where
            B: Body + Send + 'static,
            B::Data: Send,
            B::Error: Into<BoxError>,
        {
            type Response = Response<ResponseBody>;
            type Error = std::convert::Infallible;
            type Future = std::pin::Pin<
                Box<dyn Future<Output = Result<Response<ResponseBody>, Self::Error>> + Send>,
            >;

            fn poll_ready(
                &mut self,
                _: &mut std::task::Context<'_>,
            ) -> std::task::Poll<Result<(), Self::Error>> {
                std::task::Poll::Ready(Ok(()))
            }

            fn call(&mut self, request: Request<B>) -> Self::Future {
                let this = self.clone();
                Box::pin(async move { Ok(this.handle(request).await) })
            }
        }
    };
}

tower_service!(MockCloud);
tower_service!(Switchable);
