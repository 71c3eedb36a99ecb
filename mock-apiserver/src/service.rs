//! [`ApiService`]: the tower `Service` that routes requests, applies flow control and
//! journals every request.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body::{Body, Frame};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use serde_json::Value;
use tokio::time::Instant;

use crate::discovery;
use crate::error::ApiError;
use crate::flowcontrol;
use crate::handlers;
use crate::journal::{Entry, Verb};
use crate::openapi;
use crate::query::Query;
use crate::route::{self, Route};
use crate::server::ApiServer;

/// The body of every response: a full buffer, or a stream for watches.
pub type ResponseBody = UnsyncBoxBody<Bytes, Infallible>;

/// Largest request body accepted.
const MAX_BODY: usize = 32 << 20;

/// The API server as a tower `Service`. Cheap to clone; every clone serves the same
/// [`ApiServer`].
///
/// Accepts any request body type, so it works behind hyper and under
/// `kube::Client::new(service, "default")` alike.
#[derive(Clone, Debug)]
pub struct ApiService {
    server: ApiServer,
    stop: Option<tokio::sync::watch::Receiver<bool>>,
}

impl ApiService {
    pub(crate) fn new(server: ApiServer, stop: Option<tokio::sync::watch::Receiver<bool>>) -> Self {
        Self { server, stop }
    }
}

impl<B> tower::Service<Request<B>> for ApiService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: std::fmt::Display,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let server = self.server.clone();
        let stop = self.stop.clone();
        Box::pin(async move { Ok(handle(server, stop, request).await) })
    }
}

/// A JSON response with `code`.
pub fn json_response(code: StatusCode, body: Bytes) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(body).boxed_unsync());
    *response.status_mut() = code;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn value_response(code: StatusCode, value: &Value) -> Response<ResponseBody> {
    json_response(
        code,
        Bytes::from(serde_json::to_vec(value).unwrap_or_default()),
    )
}

/// A 200 chunked JSON stream (a watch).
pub fn stream_response(
    stream: impl Stream<Item = Bytes> + Send + 'static,
) -> Response<ResponseBody> {
    let body = StreamBody::new(stream.map(|chunk| Ok::<_, Infallible>(Frame::data(chunk))));
    let mut response = Response::new(BodyExt::boxed_unsync(body));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The `Status` response for an error.
pub fn error_response(error: &ApiError) -> Response<ResponseBody> {
    let code = StatusCode::from_u16(error.code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = value_response(code, &error.to_status());
    if let ApiError::TooManyRequests { retry_after_secs } = error {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_secs));
    }
    response
}

fn header_str(headers: &http::HeaderMap, name: header::HeaderName) -> &str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

fn verb_of(route: &Route, method: &Method, query: &Query) -> Verb {
    let Route::Resource(path) = route else {
        return Verb::Discovery;
    };
    match (method, path.name.is_some()) {
        (&Method::GET, _) if query.flag("watch") => Verb::Watch,
        (&Method::GET, true) => Verb::Get,
        (&Method::GET, false) => Verb::List,
        (&Method::POST, _) => Verb::Create,
        (&Method::PUT, _) => Verb::Update,
        (&Method::PATCH, _) => Verb::Patch,
        (&Method::DELETE, true) => Verb::Delete,
        (&Method::DELETE, false) => Verb::DeleteCollection,
        _ => Verb::Discovery,
    }
}

async fn handle<B>(
    server: ApiServer,
    stop: Option<tokio::sync::watch::Receiver<bool>>,
    request: Request<B>,
) -> Response<ResponseBody>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: std::fmt::Display,
{
    let started = Instant::now();
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    let query = Query::parse(parts.uri.query().unwrap_or_default());
    let route = route::parse(&path);
    if route == Route::Journal {
        let since = query.get("since").and_then(|s| s.parse().ok()).unwrap_or(0);
        return value_response(StatusCode::OK, &server.journal().to_json(since));
    }
    if route == Route::Metrics {
        let mut response = Response::new(
            Full::new(Bytes::from(server.journal().prometheus_text())).boxed_unsync(),
        );
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        );
        return response;
    }
    let verb = verb_of(&route, &parts.method, &query);
    let clock = *server.shared.store.clock();
    let mut entry = Entry {
        seq: 0,
        time: clock.rfc3339_micros(),
        elapsed: clock.elapsed(),
        verb,
        group: String::new(),
        resource: path.clone(),
        namespace: String::new(),
        name: String::new(),
        user_agent: header_str(&parts.headers, header::USER_AGENT).to_owned(),
        status: 0,
        latency: std::time::Duration::ZERO,
    };
    if let Route::Resource(p) = &route {
        entry.group = p.group.clone();
        entry.resource = match &p.subresource {
            Some(sub) => format!("{}/{sub}", p.plural),
            None => p.plural.clone(),
        };
        entry.namespace = p.namespace.clone().unwrap_or_default();
        entry.name = p.name.clone().unwrap_or_default();
    }
    let response = match admit(&server, &route, started) {
        Err(error) => error_response(&error),
        Ok(_permit) => match body.collect().await {
            Err(error) => error_response(&ApiError::bad_request(format!(
                "the request body could not be read: {error}"
            ))),
            Ok(collected) => {
                let body = collected.to_bytes();
                if body.len() > MAX_BODY {
                    error_response(&ApiError::bad_request("the request body is too large"))
                } else {
                    let request = handlers::Request {
                        method: &parts.method,
                        query: &query,
                        content_type: header_str(&parts.headers, header::CONTENT_TYPE),
                        accept: header_str(&parts.headers, header::ACCEPT),
                        body,
                        stop,
                    };
                    route_request(&server, &route, request)
                        .unwrap_or_else(|error| error_response(&error))
                }
            }
        },
    };
    entry.status = response.status().as_u16();
    entry.latency = started.elapsed();
    tracing::debug!(
        verb = verb.as_str(),
        resource = %entry.resource,
        namespace = %entry.namespace,
        name = %entry.name,
        status = entry.status,
        "request"
    );
    server.journal().record(entry);
    response
}

fn admit(
    server: &ApiServer,
    route: &Route,
    now: Instant,
) -> Result<Option<flowcontrol::Permit>, ApiError> {
    let Some(limiter) = &server.shared.limiter else {
        return Ok(None);
    };
    if *route == Route::Health {
        return Ok(None);
    }
    limiter
        .admit(now)
        .map(Some)
        .map_err(|wait| ApiError::TooManyRequests {
            retry_after_secs: flowcontrol::retry_after_secs(wait),
        })
}

fn route_request(
    server: &ApiServer,
    route: &Route,
    request: handlers::Request<'_>,
) -> Result<Response<ResponseBody>, ApiError> {
    let read_only = |request: &handlers::Request<'_>| {
        if request.method == Method::GET || request.method == Method::HEAD {
            Ok(())
        } else {
            Err(ApiError::MethodNotAllowed {
                message: format!("{} is not allowed here", request.method),
            })
        }
    };
    let found = |value: Option<Value>| {
        value
            .map(|v| value_response(StatusCode::OK, &v))
            .ok_or_else(|| ApiError::not_found("the server could not find the requested resource"))
    };
    match route {
        Route::Resource(path) => handlers::handle(server, path, request),
        Route::Version => {
            read_only(&request).map(|()| value_response(StatusCode::OK, &discovery::version()))
        }
        Route::Health => Ok(json_response(StatusCode::OK, Bytes::from_static(b"ok"))),
        Route::CoreVersions => read_only(&request)
            .map(|()| value_response(StatusCode::OK, &discovery::core_versions())),
        Route::Groups => {
            read_only(&request)?;
            Ok(value_response(
                StatusCode::OK,
                &discovery::groups(&server.registry()),
            ))
        }
        Route::Group(group) => {
            read_only(&request)?;
            found(discovery::group_document(&server.registry(), group))
        }
        Route::GroupVersion(group, version) => {
            read_only(&request)?;
            found(discovery::resource_list(&server.registry(), group, version))
        }
        Route::OpenApiIndex => {
            read_only(&request)?;
            Ok(value_response(
                StatusCode::OK,
                &openapi::index(&server.registry()),
            ))
        }
        Route::OpenApiDocument(path) => {
            read_only(&request)?;
            found(openapi::document(&server.registry(), path))
        }
        Route::Journal | Route::Metrics | Route::Unknown => Err(ApiError::not_found(
            "the server could not find the requested resource",
        )),
    }
}
