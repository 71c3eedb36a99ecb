//! [`Verb`]: what a request does, in Kubernetes audit terms, and how a request is
//! classified (the one classification the journal, the metrics and clients share).

use http::Method;
use serde::{Deserialize, Serialize};
use strum::IntoStaticStr;

use crate::query::Query;
use crate::route::{self, Route};

/// What a request did, in Kubernetes audit terms.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, IntoStaticStr,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Verb {
    /// Read one object.
    Get,
    /// Read a collection.
    List,
    /// Stream changes.
    Watch,
    /// POST.
    Create,
    /// PUT.
    Update,
    /// PATCH.
    Patch,
    /// DELETE of one object.
    Delete,
    /// DELETE of a collection.
    DeleteCollection,
    /// Discovery, OpenAPI, version and health endpoints (and methods a resource path does
    /// not serve).
    Discovery,
}

impl Verb {
    /// The verb of a request with `method` to `path` (without the query) and raw `query`,
    /// as the API server counts it: a GET with `watch=true|1` watches, a GET or DELETE of a
    /// path that names an object is `get` or `delete`, of a collection `list` or
    /// `deletecollection`; anything that is not a resource path is [`Verb::Discovery`].
    ///
    /// ```
    /// use mock_apiserver::Verb;
    /// let buckets = "/apis/example.org/v1/namespaces/a/buckets";
    /// assert_eq!(Verb::of(&http::Method::GET, buckets, "watch=true"), Verb::Watch);
    /// assert_eq!(Verb::of(&http::Method::PATCH, &format!("{buckets}/b/status"), ""), Verb::Patch);
    /// assert_eq!(Verb::of(&http::Method::GET, "/version", ""), Verb::Discovery);
    /// ```
    pub fn of(method: &Method, path: &str, query: &str) -> Verb {
        Self::of_route(&route::parse(path), method, &Query::parse(query))
    }

    pub(crate) fn of_route(route: &Route, method: &Method, query: &Query) -> Verb {
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

    /// The lowercase name used on the wire and in reports.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Whether the verb changes state.
    pub fn is_write(self) -> bool {
        matches!(
            self,
            Self::Create | Self::Update | Self::Patch | Self::Delete | Self::DeleteCollection
        )
    }

    /// The `subresource` label under which kube-apiserver counts a request to `path`, a
    /// path that names no resource, in `apiserver_request_total` (verb `GET`, empty
    /// group, version, resource, scope and component), or `None` for the paths it does
    /// not count: it counts the OpenAPI v3 index (`openapi/v3`) and documents (all as
    /// `openapi/v3/`) and the health roots (their path), whose handlers it wraps in
    /// `metrics.InstrumentHandlerFunc`; legacy discovery (`/api`, `/apis`,
    /// `/apis/GROUP[/VERSION]`, `/api/v1`), `/version`, `/openapi/v2` and `/metrics`
    /// are served unwrapped and not counted (`/api` and `/apis` are counted as `api` and
    /// `apis` only when answered as aggregated discovery, which mock-apiserver does not
    /// serve).
    ///
    /// ```
    /// use mock_apiserver::Verb;
    /// assert_eq!(Verb::non_resource_label("/openapi/v3/apis/example.org/v1"), Some("openapi/v3/"));
    /// assert_eq!(Verb::non_resource_label("/readyz"), Some("/readyz"));
    /// assert_eq!(Verb::non_resource_label("/apis"), None);
    /// ```
    pub fn non_resource_label(path: &str) -> Option<&str> {
        match path {
            "/openapi/v3" => Some("openapi/v3"),
            "/healthz" | "/livez" | "/readyz" => Some(path),
            _ if path.starts_with("/openapi/v3/") => Some("openapi/v3/"),
            _ => None,
        }
    }

    /// The verb label of `apiserver_request_total`, or `None` for requests the real API
    /// server does not count by resource (discovery, health).
    pub fn metric_label(self) -> Option<&'static str> {
        Some(match self {
            Self::Get => "GET",
            Self::List => "LIST",
            Self::Watch => "WATCH",
            Self::Create => "POST",
            Self::Update => "PUT",
            Self::Patch => "PATCH",
            Self::Delete => "DELETE",
            Self::DeleteCollection => "DELETECOLLECTION",
            Self::Discovery => return None,
        })
    }

    /// The verb of a real API server's `apiserver_request_total` verb label (its
    /// `CleanVerb`: a server-side apply is `APPLY`, a watch of the old `/watch/` paths
    /// `WATCHLIST`), or `None` for a label that names no resource verb (`CONNECT`).
    ///
    /// ```
    /// use mock_apiserver::Verb;
    /// assert_eq!(Verb::from_metric_label("APPLY"), Some(Verb::Patch));
    /// assert_eq!(Verb::from_metric_label("POST"), Some(Verb::Create));
    /// ```
    pub fn from_metric_label(label: &str) -> Option<Verb> {
        Some(match label {
            "GET" => Self::Get,
            "LIST" => Self::List,
            "WATCH" | "WATCHLIST" => Self::Watch,
            "POST" => Self::Create,
            "PUT" => Self::Update,
            "PATCH" | "APPLY" => Self::Patch,
            "DELETE" => Self::Delete,
            "DELETECOLLECTION" => Self::DeleteCollection,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_follow_the_api_servers_names() {
        let g = "/apis/mockcloud.example.org/v1alpha1";
        let get = Method::GET;
        let cases = [
            (&get, format!("{g}/namespaces/a/buckets"), "", Verb::List),
            (&get, format!("{g}/namespaces/a/buckets/b"), "", Verb::Get),
            (
                &get,
                format!("{g}/namespaces/a/buckets"),
                "&watch=true&resourceVersion=1",
                Verb::Watch,
            ),
            (&get, format!("{g}/providerconfigs/x"), "", Verb::Get),
            (&get, "/api/v1/namespaces/a".to_owned(), "", Verb::Get),
            (
                &Method::PATCH,
                format!("{g}/namespaces/a/buckets/b/status"),
                "",
                Verb::Patch,
            ),
            (
                &Method::POST,
                format!("{g}/namespaces/a/buckets"),
                "",
                Verb::Create,
            ),
            (
                &Method::DELETE,
                format!("{g}/namespaces/a/buckets/b"),
                "",
                Verb::Delete,
            ),
            (
                &Method::DELETE,
                format!("{g}/namespaces/a/buckets"),
                "",
                Verb::DeleteCollection,
            ),
            (&get, "/openapi/v3".to_owned(), "", Verb::Discovery),
        ];
        for (method, path, query, want) in cases {
            assert_eq!(Verb::of(method, &path, query), want, "{method} {path}");
        }
    }

    #[test]
    fn metric_labels_map_back_to_their_verbs() {
        for verb in [
            Verb::Get,
            Verb::List,
            Verb::Watch,
            Verb::Create,
            Verb::Update,
            Verb::Patch,
            Verb::Delete,
            Verb::DeleteCollection,
        ] {
            let label = verb.metric_label().unwrap();
            assert_eq!(Verb::from_metric_label(label), Some(verb), "{label}");
        }
        assert_eq!(Verb::from_metric_label("CONNECT"), None);
    }

    #[test]
    fn verbs_are_lowercase_on_the_wire() {
        assert_eq!(
            serde_json::to_string(&Verb::DeleteCollection).unwrap(),
            "\"deletecollection\""
        );
        for verb in [Verb::Get, Verb::Watch, Verb::Discovery] {
            let back: Verb = serde_json::from_str(&format!("\"{}\"", verb.as_str())).unwrap();
            assert_eq!(back, verb);
        }
    }
}
