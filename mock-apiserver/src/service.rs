//! [`ApiService`]: the tower `Service` that routes requests, applies flow control and
//! journals every request.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body::Body;
use http_body_util::BodyExt;
use serde_json::Value;
use tokio::time::Instant;

use crate::discovery;
use crate::error::ApiError;
use crate::flowcontrol::apf::{Classification, Rejection};
use crate::flowcontrol::config::RequestDigest;
use crate::flowcontrol::{self, Limiter};
use crate::handlers;
use crate::identity::User;
use crate::journal::{self, Entry, X_EPOCH};
use crate::long_running::OnEnd;
use crate::openapi;
use crate::query::Query;
use crate::response::{
    ResponseBody, bytes_response, error_response, json_response, value_response,
};
use crate::route::{self, Route};
use crate::server::ApiServer;
use crate::verb::Verb;

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

impl ApiServer {
    /// A tower `Service` answering Kubernetes API requests in-process.
    pub fn service(&self) -> ApiService {
        ApiService::new(self.clone(), None)
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

fn header_str(headers: &http::HeaderMap, name: header::HeaderName) -> &str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
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
        return journal_response(&server, &query);
    }
    if route == Route::Metrics {
        let mut text = server.journal().prometheus_text();
        if let Some(Limiter::PriorityAndFairness(apf)) = &server.shared.limiter {
            text.push_str(&apf.prometheus_text());
        }
        return bytes_response(
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            Bytes::from(text),
        );
    }
    let verb = Verb::of_route(&route, &parts.method, &query);
    let clock = *server.shared.store.clock();
    let mut entry = Entry {
        seq: 0,
        at_us: journal::micros(clock.elapsed()),
        verb,
        group: "".into(),
        resource: path.as_str().into(),
        namespace: "".into(),
        name: "".into(),
        user_agent: header_str(&parts.headers, header::USER_AGENT).into(),
        status: 0,
        latency_us: 0,
        changed: None,
    };
    if let Route::Resource(p) = &route {
        entry.group = p.group.as_str().into();
        entry.resource = match &p.subresource {
            Some(sub) => format!("{}/{sub}", p.plural).into(),
            None => p.plural.as_str().into(),
        };
        entry.namespace = p.namespace.as_deref().unwrap_or_default().into();
        entry.name = p.name.as_deref().unwrap_or_default().into();
    }
    let admission = admit(&server, &route, &parts, verb, &path, started).await;
    let classification = match &admission {
        Admission::PriorityAndFairness(_, c) => Some(c.clone()),
        Admission::Refused(_, c) => c.clone(),
        Admission::Open | Admission::Immediate(_) => None,
    };
    let mut response = match admission {
        Admission::Refused(response, _) => response,
        _permit => match body.collect().await {
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
                        user_agent: header_str(&parts.headers, header::USER_AGENT),
                        body,
                        stop,
                    };
                    route_request(&server, &route, request)
                        .unwrap_or_else(|error| error_response(&error))
                }
            }
        },
    };
    if let Some(classification) = &classification {
        set_classification_headers(&mut response, classification);
    }
    entry.status = response.status().as_u16();
    entry.latency_us = journal::micros(started.elapsed());
    entry.changed = response
        .extensions()
        .get::<journal::WriteOutcome>()
        .map(|w| w.changed);
    tracing::debug!(
        verb = verb.as_str(),
        resource = %entry.resource,
        namespace = %entry.namespace,
        name = %entry.name,
        status = entry.status,
        "request"
    );
    let apply =
        header_str(&parts.headers, header::CONTENT_TYPE).starts_with("application/apply-patch");
    let metric_verb = match verb {
        Verb::Patch if apply => Some("APPLY"),
        _ => verb.metric_label(),
    };
    let version = match &route {
        Route::Resource(p) => p.version.as_str(),
        _ => "",
    };
    // A watch that streams is counted when its stream ends, as the apiserver's
    // `MonitorRequest` runs when the watch handler returns (`endpoints/metrics/metrics.go`,
    // `endpoints/handlers/watch.go`); one refused at once is counted at once.
    let streams = verb == Verb::Watch && response.status() == StatusCode::OK;
    let code = entry.status;
    let (_, open) = server
        .journal()
        .record_labelled(entry, metric_verb, version, streams);
    match open {
        Some(series) => response.map(|body| {
            let server = server.clone();
            let on_end = move || {
                server
                    .journal()
                    .long_running_ended(series, code, started.elapsed());
            };
            OnEnd::new(body, on_end).boxed_unsync()
        }),
        None => response,
    }
}

/// `GET /mock/v1/requests?since=SEQ`: a [`journal::JournalPage`], with the epoch also in
/// the `x-epoch` header.
fn journal_response(server: &ApiServer, query: &Query) -> Response<ResponseBody> {
    let since = query.get("since").and_then(|s| s.parse().ok()).unwrap_or(0);
    let page = server.journal().page(since);
    let mut response = json_response(
        StatusCode::OK,
        Bytes::from(serde_json::to_vec(&page).unwrap_or_default()),
    );
    if let Ok(epoch) = HeaderValue::try_from(page.epoch.to_string()) {
        response.headers_mut().insert(X_EPOCH, epoch);
    }
    response
}

/// What flow control decided.
enum Admission {
    /// No flow control, or a path it does not limit.
    Open,
    /// Admitted by the immediate limit.
    Immediate(#[expect(dead_code, reason = "held for its Drop")] flowcontrol::bucket::Permit),
    /// Admitted by API Priority and Fairness (the seat is held until the handler returns).
    PriorityAndFairness(
        #[expect(dead_code, reason = "held for its Drop")] flowcontrol::apf::Seat,
        Classification,
    ),
    /// Refused: the answer, and how API Priority and Fairness classified the request.
    Refused(Response<ResponseBody>, Option<Classification>),
}

async fn admit(
    server: &ApiServer,
    route: &Route,
    parts: &http::request::Parts,
    verb: Verb,
    path: &str,
    now: Instant,
) -> Admission {
    let Some(limiter) = &server.shared.limiter else {
        return Admission::Open;
    };
    match limiter {
        Limiter::Immediate(_) if *route == Route::Health => Admission::Open,
        Limiter::Immediate(limiter) => match limiter.admit(now) {
            Ok(permit) => Admission::Immediate(permit),
            Err(wait) => Admission::Refused(
                error_response(&ApiError::TooManyRequests {
                    retry_after_secs: flowcontrol::retry_after_secs(wait),
                }),
                None,
            ),
        },
        Limiter::PriorityAndFairness(apf) => {
            let user = match User::of_request(&parts.headers, &server.shared.config.user) {
                Ok(user) => user,
                Err(message) => {
                    return Admission::Refused(
                        error_response(&ApiError::bad_request(message)),
                        None,
                    );
                }
            };
            let method = parts.method.as_str().to_ascii_lowercase();
            let digest = match route {
                Route::Resource(p) => {
                    // The apiserver's request info names a namespace's own namespace.
                    let namespace = match (&p.namespace, &p.name) {
                        (Some(ns), _) => ns.as_str(),
                        (None, Some(name)) if p.plural == "namespaces" && p.group.is_empty() => {
                            name.as_str()
                        }
                        (None, _) => "",
                    };
                    RequestDigest {
                        user: &user,
                        resource_request: true,
                        verb: verb.as_str(),
                        api_group: &p.group,
                        resource: &p.plural,
                        subresource: p.subresource.as_deref().unwrap_or_default(),
                        namespace,
                        path,
                    }
                }
                _ => RequestDigest {
                    user: &user,
                    resource_request: false,
                    verb: &method,
                    api_group: "",
                    resource: "",
                    subresource: "",
                    namespace: "",
                    path,
                },
            };
            match apf.admit(&digest).await {
                Ok((seat, classification)) => Admission::PriorityAndFairness(seat, classification),
                Err(rejection) => {
                    Admission::Refused(apf_rejection(&rejection), Some(rejection.classification))
                }
            }
        }
    }
}

/// API Priority and Fairness's 429: `tooManyRequests` in
/// `server/filters/priority-and-fairness.go`, written by Go's `http.Error` (plain text,
/// `nosniff`, a newline after the message).
fn apf_rejection(rejection: &Rejection) -> Response<ResponseBody> {
    let mut response = bytes_response(
        StatusCode::TOO_MANY_REQUESTS,
        "text/plain; charset=utf-8",
        Bytes::from_static(b"Too many requests, please try again later.\n"),
    );
    let headers = response.headers_mut();
    headers.insert(
        header::RETRY_AFTER,
        HeaderValue::from(rejection.retry_after_secs),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// The uids of the flow schema and priority level a request was classified into, on its
/// answer (served or refused), as `setResponseHeaders` sends them.
fn set_classification_headers(response: &mut Response<ResponseBody>, c: &Classification) {
    let headers = response.headers_mut();
    if let Ok(uid) = HeaderValue::try_from(c.priority_level_uid.as_str()) {
        headers.insert("x-kubernetes-pf-prioritylevel-uid", uid);
    }
    if let Ok(uid) = HeaderValue::try_from(c.flow_schema_uid.as_str()) {
        headers.insert("x-kubernetes-pf-flowschema-uid", uid);
    }
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
