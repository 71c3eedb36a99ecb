//! The resource verbs: get, list, watch, create, update, patch, delete and
//! deletecollection, on objects and on their `/status` subresource.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Response, StatusCode};
use serde_json::Value;

use crate::error::ApiError;
use crate::events;
use crate::object::{self, StoredObject};
use crate::protobuf::{self, ProtobufError};
use crate::query::Query;
use crate::registry::{ResourceKind, View};
use crate::render::{Format, Renderer};
use crate::response::{ResponseBody, stream_response};
use crate::route::ResourcePath;
use crate::selector::{FieldSelector, LabelSelector};
use crate::server::ApiServer;
use crate::store::Subresource;
use crate::watch::{self, Filter, WatchParams};

mod apply_body;
mod list_options;
mod paging;
mod write;

/// What a handler needs from the request.
pub struct Request<'a> {
    /// The HTTP method.
    pub method: &'a Method,
    /// Decoded query parameters.
    pub query: &'a Query,
    /// The `Content-Type` header, or empty.
    pub content_type: &'a str,
    /// The `Accept` header, or empty.
    pub accept: &'a str,
    /// The `User-Agent` header, or empty.
    pub user_agent: &'a str,
    /// The whole request body.
    pub body: Bytes,
    /// Ends watch streams when the serving socket shuts down.
    pub stop: Option<tokio::sync::watch::Receiver<bool>>,
}

/// Default watch length when the client gives no `timeoutSeconds` (the real server's
/// minimum request timeout).
const DEFAULT_WATCH_TIMEOUT: Duration = Duration::from_secs(1800);

fn unknown_resource() -> ApiError {
    ApiError::not_found("the server could not find the requested resource")
}

/// Handles a request to a resource path.
pub fn handle(
    server: &ApiServer,
    path: &ResourcePath,
    request: Request<'_>,
) -> Result<Response<ResponseBody>, ApiError> {
    let kind = server
        .kind(&path.group, &path.version, &path.plural)
        .ok_or_else(unknown_resource)?;
    if !kind.namespaced && path.namespace.is_some() {
        return Err(unknown_resource());
    }
    if kind.namespaced && path.namespace.is_none() && path.name.is_some() {
        return Err(unknown_resource());
    }
    let subresource = match path.subresource.as_deref() {
        None => Subresource::Main,
        Some("status") if kind.status_subresource => Subresource::Status,
        Some(_) => return Err(unknown_resource()),
    };
    let store_kind = match kind.view {
        View::CoreEvents => server
            .kind("events.k8s.io", "v1", "events")
            .ok_or_else(unknown_resource)?,
        View::Plain => kind.clone(),
    };
    let now = server.shared.store.clock().now().as_second();
    let format = Format::from_accept(request.accept, &kind.api_version(), &kind.kind);
    let renderer = Renderer::new(kind.clone(), format, now);
    let context = Context {
        server,
        kind: &kind,
        store_kind: &store_kind,
        renderer: &renderer,
        path,
        subresource,
    };
    let namespace = path.namespace.as_deref().unwrap_or_default();
    match (request.method, path.name.as_deref()) {
        (&Method::GET, None) if request.query.flag("watch") => context.watch(&request, None),
        (&Method::GET, Some(name)) if request.query.flag("watch") => {
            context.watch(&request, Some(name))
        }
        (&Method::GET, None) => context.list(&request),
        (&Method::GET, Some(name)) => {
            let object = server.shared.store.get(&store_kind, namespace, name)?;
            Ok(renderer.object_response(StatusCode::OK, &object))
        }
        (&Method::POST, None)
            if kind.namespaced == path.namespace.is_some() && subresource == Subresource::Main =>
        {
            context.create(&request)
        }
        (&Method::PUT, Some(name)) => context.update(&request, name),
        (&Method::PATCH, Some(name)) => context.patch(&request, name),
        (&Method::DELETE, Some(name)) if subresource == Subresource::Main => {
            context.delete(&request, name)
        }
        (&Method::DELETE, None) => context.delete_collection(&request),
        (method, _) => Err(ApiError::MethodNotAllowed {
            message: format!(
                "the server does not allow this method on the requested resource: {method}"
            ),
        }),
    }
}

struct Context<'a> {
    server: &'a ApiServer,
    kind: &'a Arc<ResourceKind>,
    store_kind: &'a Arc<ResourceKind>,
    renderer: &'a Renderer,
    path: &'a ResourcePath,
    subresource: Subresource,
}

fn dry_run(query: &Query) -> bool {
    query.get("dryRun") == Some("All")
}

/// The body media types of creates and updates, as a 415 lists them.
const ACCEPTED_BODIES: &str =
    "application/json, application/yaml, application/vnd.kubernetes.protobuf";

/// An error with its causes, as one line.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Parses a JSON, YAML or (for built-in kinds that have a message) protobuf request body.
fn decode(kind: &ResourceKind, content_type: &str, body: &[u8]) -> Result<Value, ApiError> {
    let media = content_type.split(';').next().unwrap_or_default().trim();
    let value: Value = match media {
        "" | "application/json" | "*/*" => serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!(
                "the body of the request could not be decoded as JSON: {e}"
            ))
        })?,
        "application/yaml" => {
            let text = std::str::from_utf8(body)
                .map_err(|_| ApiError::bad_request("the body is not UTF-8"))?;
            serde_saphyr::from_str(text).map_err(|e| {
                ApiError::bad_request(format!(
                    "the body of the request could not be decoded as YAML: {e}"
                ))
            })?
        }
        protobuf::MEDIA_TYPE if protobuf::supports(&kind.api_version(), &kind.kind) => {
            protobuf::decode(body).map_err(|e| match e {
                ProtobufError::Unsupported { .. } => ApiError::UnsupportedMediaType {
                    accepted: ACCEPTED_BODIES.into(),
                },
                other => ApiError::bad_request(error_chain(&other)),
            })?
        }
        _ => {
            return Err(ApiError::UnsupportedMediaType {
                accepted: "application/json, application/yaml".into(),
            });
        }
    };
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON object",
        ));
    }
    Ok(value)
}

impl Context<'_> {
    fn namespace(&self) -> &str {
        self.path.namespace.as_deref().unwrap_or_default()
    }

    fn is_crd(&self) -> bool {
        self.kind.group == "apiextensions.k8s.io" && self.kind.plural == "customresourcedefinitions"
    }

    /// Converts a client's body to the stored form, checking apiVersion and kind.
    fn incoming(&self, mut body: Value) -> Result<Value, ApiError> {
        let api_version = body["apiVersion"].as_str().unwrap_or_default();
        if !api_version.is_empty() && api_version != self.kind.api_version() {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({api_version}) does not match the expected API version ({})",
                self.kind.api_version()
            )));
        }
        let kind = body["kind"].as_str().unwrap_or_default();
        if !kind.is_empty() && kind != self.kind.kind {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({kind}) does not match the expected kind ({})",
                self.kind.kind
            )));
        }
        if let Some(ns) = body["metadata"]["namespace"].as_str()
            && !ns.is_empty()
            && self.kind.namespaced
            && ns != self.namespace()
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        if self.kind.view == View::CoreEvents {
            body = events::from_core(&body);
        }
        Ok(body)
    }

    fn filter(&self, query: &Query, pinned_name: Option<&str>) -> Result<Filter, ApiError> {
        let labels = LabelSelector::parse(query.get("labelSelector").unwrap_or_default())
            .map_err(|e| ApiError::bad_request(format!("unable to parse labelSelector: {e}")))?;
        let fields = FieldSelector::parse(query.get("fieldSelector").unwrap_or_default())
            .map_err(|e| ApiError::bad_request(format!("unable to parse fieldSelector: {e}")))?;
        for field in fields.fields() {
            let known = matches!(field, "metadata.name" | "metadata.namespace")
                || self.kind.field_labels.iter().any(|f| f == field);
            if !known {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {field}"
                )));
            }
        }
        let namespace = self.path.namespace.clone();
        let pinned_name = pinned_name.map(str::to_owned);
        let renderer = self.renderer.clone();
        Ok(Arc::new(move |object: &StoredObject| {
            if namespace
                .as_deref()
                .is_some_and(|ns| ns != &*object.namespace)
                || pinned_name.as_deref().is_some_and(|n| n != &*object.name)
                || !labels.matches(|k| object.label(k))
            {
                return false;
            }
            if fields.is_empty() {
                return true;
            }
            let parsed = OnceLock::new();
            fields.matches(|field| match field {
                "metadata.name" => Some(object.name.to_string()),
                "metadata.namespace" => Some(object.namespace.to_string()),
                other => object::field_value(parsed.get_or_init(|| renderer.value(object)), other),
            })
        }))
    }

    fn list(&self, request: &Request<'_>) -> Result<Response<ResponseBody>, ApiError> {
        list_options::validate(request.query, false)?;
        let filter = self.filter(request.query, None)?;
        let query = request.query;
        // Like the real server's watch cache, `resourceVersion=0` ignores `limit`.
        let limit = match query.get("limit").filter(|l| !l.is_empty()) {
            _ if query.get("resourceVersion") == Some("0") => None,
            None => None,
            Some(limit) => match limit.parse::<usize>() {
                Ok(0) => None,
                Ok(n) => Some(n),
                Err(_) => return Err(ApiError::bad_request(format!("invalid limit {limit:?}"))),
            },
        };
        let store = &self.server.shared.store;
        let continued = match query.get("continue").filter(|c| !c.is_empty()) {
            Some(token) => {
                let (rv, key) = paging::decode(token).ok_or_else(|| {
                    ApiError::bad_request(format!("invalid continue token {token:?}"))
                })?;
                if store.expired(self.store_kind, rv) {
                    return Err(ApiError::Expired {
                        message: "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.".into(),
                    });
                }
                Some((rv, key))
            }
            None => None,
        };
        let after = continued.as_ref().map(|(_, key)| key.as_str());
        let page = store.list_page(
            self.store_kind,
            self.path.namespace.as_deref(),
            after,
            limit,
            |o| filter(o),
        );
        // Every page reports the first page's resourceVersion, so a watch started from
        // it replays whatever changed while the pages were read.
        let rv = continued
            .as_ref()
            .map_or(page.resource_version, |(rv, _)| *rv);
        let token = page.next.as_deref().map(|key| paging::encode(rv, key));
        // The storage counts what follows only when nothing is filtered (`pred.Empty()`
        // in storage/etcd3/store.go's GetList).
        let unfiltered = ["labelSelector", "fieldSelector"]
            .iter()
            .all(|p| query.get(p).is_none_or(str::is_empty));
        let remaining = page.remaining.filter(|_| unfiltered);
        Ok(self
            .renderer
            .list_response(&page.items, rv, token.as_deref(), remaining))
    }

    fn watch(
        &self,
        request: &Request<'_>,
        name: Option<&str>,
    ) -> Result<Response<ResponseBody>, ApiError> {
        list_options::validate(request.query, true)?;
        let filter = self.filter(request.query, name)?;
        let query = request.query;
        let initial_events = query.flag("sendInitialEvents");
        let from =
            match query.get("resourceVersion").unwrap_or_default() {
                _ if initial_events => None,
                "" | "0" => None,
                rv => Some(rv.parse::<u64>().map_err(|_| {
                    ApiError::bad_request(format!("invalid resourceVersion {rv:?}"))
                })?),
            };
        let timeout =
            match query.get("timeoutSeconds") {
                Some(secs) => Duration::from_secs(secs.parse().map_err(|_| {
                    ApiError::bad_request(format!("invalid timeoutSeconds {secs:?}"))
                })?),
                None => DEFAULT_WATCH_TIMEOUT,
            };
        let start = self.server.shared.store.watch(self.store_kind, from);
        let params = WatchParams {
            renderer: self.renderer.clone(),
            filter,
            timeout,
            bookmarks: query.flag("allowWatchBookmarks"),
            bookmark_interval: self.server.shared.config.bookmark_interval,
            initial_events_end: initial_events,
            stop: request.stop.clone(),
        };
        Ok(stream_response(
            self.renderer.watch_content_type(),
            watch::stream(self.server.shared.store.clone(), start, params),
        ))
    }
}
