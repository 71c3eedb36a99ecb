//! Who sent a Kubernetes request: the harness's own `User-Agent` and a count of its requests
//! by verb and resource (subtracted from an API server's metrics, which have no per-client
//! label), and [`ProviderAgent`], how a journal tells the provider's requests apart.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use kube::client::{Body, ClientBuilder};

use crate::run::error::RunError;
use crate::scenario::Scenario;

/// What the harness's `User-Agent` starts with.
pub const HARNESS_USER_AGENT_PREFIX: &str = "harness/";

/// Go's name for this machine's architecture (`GOARCH`), as client-go's `User-Agent`
/// gives it.
fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    }
}

/// The `User-Agent` of the harness's own Kubernetes requests, in client-go's convention:
/// `harness/v0.1.0 (linux/amd64)`.
#[must_use]
pub fn harness_user_agent() -> &'static str {
    static AGENT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!(
            "{HARNESS_USER_AGENT_PREFIX}v{} ({}/{})",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS,
            go_arch()
        )
    });
    &AGENT
}

/// Whether `user_agent` is the harness's.
#[must_use]
pub fn is_harness(user_agent: &str) -> bool {
    user_agent.starts_with(HARNESS_USER_AGENT_PREFIX)
}

/// How a journal that names each request's `User-Agent` tells the provider's apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProviderAgent {
    /// The requests whose `User-Agent` starts with this (this workspace's provider's
    /// `provider/`, or a profile's `userAgent`).
    Prefix(String),
    /// A profile that states no `userAgent`: every request that is not the harness's.
    NotHarness,
}

impl ProviderAgent {
    /// The scenario's provider: this workspace's, or the profile's `userAgent`.
    #[must_use]
    pub fn of(s: &Scenario) -> ProviderAgent {
        match &s.profile {
            None => ProviderAgent::Prefix(provider::kube_client::USER_AGENT_PREFIX.to_owned()),
            Some(p) => p
                .user_agent
                .clone()
                .map_or(ProviderAgent::NotHarness, ProviderAgent::Prefix),
        }
    }

    /// Whether a request with `user_agent` is the provider's.
    #[must_use]
    pub fn is_provider(&self, user_agent: &str) -> bool {
        match self {
            ProviderAgent::Prefix(p) => user_agent.starts_with(p.as_str()),
            ProviderAgent::NotHarness => !is_harness(user_agent),
        }
    }

    /// Whether the provider's requests are told apart from every other client's.
    #[must_use]
    pub fn exact(&self) -> bool {
        matches!(self, ProviderAgent::Prefix(_))
    }

    /// A phrase for the result: `User-Agent "provider/…"`.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            ProviderAgent::Prefix(p) => format!("User-Agent {p:?}…"),
            ProviderAgent::NotHarness => {
                "every User-Agent but the harness's (the profile states no userAgent, so another client's requests would count as the provider's)".to_owned()
            }
        }
    }
}

/// A request's verb and resource as the API server counts them: `buckets.GROUP/status`
/// (`PLURAL[.GROUP][/SUBRESOURCE]`; a core kind has no group), or for a request that names
/// no resource (discovery, `/version`, `/metrics`) its [`discovery_name`], with the verb
/// `discovery`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestKey {
    /// The lowercase Kubernetes verb (`get`, `list`, `watch`, `create`, `update`, `patch`,
    /// `delete`, `deletecollection`, `discovery`).
    pub verb: &'static str,
    /// The resource, or the path.
    pub resource: String,
}

/// `PLURAL[.GROUP][/SUBRESOURCE]`.
#[must_use]
pub fn resource_name(group: &str, plural: &str, subresource: &str) -> String {
    let mut out = plural.to_owned();
    if !group.is_empty() {
        out.push('.');
        out.push_str(group);
    }
    if !subresource.is_empty() {
        out.push('/');
        out.push_str(subresource);
    }
    out
}

/// The group, plural and subresource a resource path names (`/api/v1/…`,
/// `/apis/GROUP/VERSION/…`, namespaced or not), or `None` for a path that names no
/// resource.
#[must_use]
pub fn resource_of_path(path: &str) -> Option<(&str, &str, &str)> {
    let (group, rest) = if let Some(rest) = path.strip_prefix("/api/v1/") {
        ("", rest)
    } else {
        let rest = path.strip_prefix("/apis/")?;
        let (group, rest) = rest.split_once('/')?;
        let (_version, rest) = rest.split_once('/')?;
        (group, rest)
    };
    let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    // `namespaces/NS/PLURAL…` is namespaced; `namespaces`, `namespaces/NAME` and
    // `namespaces/NAME/status|finalize` are the Namespace itself.
    let named = match segments.as_slice() {
        ["namespaces", _, sub] if group.is_empty() && matches!(*sub, "status" | "finalize") => {
            &segments[..]
        }
        ["namespaces", _, rest @ ..] if !rest.is_empty() => rest,
        all => all,
    };
    match named {
        [plural] | [plural, _] => Some((group, plural, "")),
        [plural, _, sub, ..] => Some((group, plural, sub)),
        [] => None,
    }
}

/// The [`RequestKey`] of a request with `method` to `path` and `query`.
#[must_use]
pub fn request_key(method: &http::Method, path: &str, query: &str) -> RequestKey {
    let verb = mock_apiserver::Verb::of(method, path, query);
    match resource_of_path(path) {
        Some((group, plural, sub)) if verb != mock_apiserver::Verb::Discovery => RequestKey {
            verb: verb.as_str(),
            resource: resource_name(group, plural, sub),
        },
        _ => RequestKey {
            verb: mock_apiserver::Verb::Discovery.as_str(),
            resource: discovery_name(path).to_owned(),
        },
    }
}

/// The resource a request that names none is counted under: the `subresource` label an
/// API server's `apiserver_request_total` gives it where it counts it
/// ([`mock_apiserver::Verb::non_resource_label`]: `openapi/v3/` for every OpenAPI v3
/// document), so that every source names it alike; else its path.
#[must_use]
pub fn discovery_name(path: &str) -> &str {
    mock_apiserver::Verb::non_resource_label(path).unwrap_or(path)
}

/// The harness's own requests, by verb and resource.
#[derive(Clone, Debug, Default)]
pub struct OwnRequests(Arc<Mutex<BTreeMap<RequestKey, u64>>>);

impl OwnRequests {
    /// Counts `request`.
    pub fn count(&self, request: &http::Request<Body>) {
        let key = request_key(
            request.method(),
            request.uri().path(),
            request.uri().query().unwrap_or_default(),
        );
        *self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_default() += 1;
    }

    /// The counts so far.
    #[must_use]
    pub fn snapshot(&self) -> BTreeMap<RequestKey, u64> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// A tower layer for the harness's client: sets its `User-Agent` and counts its requests.
#[must_use]
pub fn layer(
    own: OwnRequests,
) -> tower::util::MapRequestLayer<impl Fn(http::Request<Body>) -> http::Request<Body> + Clone> {
    tower::util::MapRequestLayer::new(move |mut req: http::Request<Body>| {
        own.count(&req);
        req.headers_mut().insert(
            http::header::USER_AGENT,
            http::HeaderValue::from_static(harness_user_agent()),
        );
        req
    })
}

/// A client of the harness (its `User-Agent`, its requests to the provider's group counted
/// into `own`) for the cluster of `kubeconfig`'s `context` (default: its current one), and
/// the configuration it was built from.
///
/// # Errors
/// [`RunError::Kubeconfig`]: the file cannot be read, or its context cannot be used.
pub async fn kube_client(
    kubeconfig: &Path,
    context: Option<String>,
    own: &OwnRequests,
) -> Result<(kube::Client, kube::Config), RunError> {
    let bad = |source: Box<dyn std::error::Error + Send + Sync>| RunError::Kubeconfig {
        path: kubeconfig.to_path_buf(),
        source,
    };
    let file = kube::config::Kubeconfig::read_from(kubeconfig).map_err(|e| bad(e.into()))?;
    let config = kube::Config::from_custom_kubeconfig(
        file,
        &kube::config::KubeConfigOptions {
            context,
            ..Default::default()
        },
    )
    .await
    .map_err(|e| bad(e.into()))?;
    let client = ClientBuilder::try_from(config.clone())
        .map_err(|e| bad(e.into()))?
        .with_layer(&layer(own.clone()))
        .build();
    Ok((client, config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_by_verb_and_resource() {
        let own = OwnRequests::default();
        let request = |method: http::Method, path: &str| {
            http::Request::builder()
                .method(method)
                .uri(path)
                .body(Body::empty())
                .expect("valid request")
        };
        let get = http::Method::GET;
        own.count(&request(
            get.clone(),
            "/apis/mockcloud.example.org/v1alpha1/namespaces/a/buckets",
        ));
        own.count(&request(
            http::Method::PATCH,
            "/apis/mockcloud.example.org/v1alpha1/namespaces/a/buckets/b/status",
        ));
        own.count(&request(get.clone(), "/api/v1/namespaces/a/secrets/s"));
        own.count(&request(http::Method::DELETE, "/api/v1/namespaces/a"));
        own.count(&request(
            get.clone(),
            "/apis/events.k8s.io/v1/namespaces/a/events?watch=true",
        ));
        own.count(&request(get, "/metrics"));
        let counts: Vec<(String, u64)> = own
            .snapshot()
            .into_iter()
            .map(|(k, n)| (format!("{} {}", k.verb, k.resource), n))
            .collect();
        let want = [
            ("delete namespaces", 1),
            ("discovery /metrics", 1),
            ("get secrets", 1),
            ("list buckets.mockcloud.example.org", 1),
            ("patch buckets.mockcloud.example.org/status", 1),
            ("watch events.events.k8s.io", 1),
        ]
        .map(|(k, n)| (k.to_owned(), n));
        assert_eq!(counts, want);
    }

    #[test]
    fn resource_paths_name_group_plural_and_subresource() {
        assert_eq!(
            resource_of_path("/api/v1/namespaces/a/finalize"),
            Some(("", "namespaces", "finalize"))
        );
        assert_eq!(
            resource_of_path("/api/v1/namespaces"),
            Some(("", "namespaces", ""))
        );
        assert_eq!(
            resource_of_path("/apis/coordination.k8s.io/v1/namespaces/a/leases/l"),
            Some(("coordination.k8s.io", "leases", ""))
        );
        assert_eq!(
            resource_of_path("/apis/x.io/v1/clusterthings/t/status"),
            Some(("x.io", "clusterthings", "status"))
        );
        assert_eq!(resource_of_path("/apis/x.io/v1"), None);
        assert_eq!(resource_of_path("/version"), None);
    }

    #[test]
    fn the_user_agents_follow_client_gos_convention() {
        let agent = harness_user_agent();
        assert!(is_harness(agent));
        assert!(
            agent.starts_with(&format!("harness/v{} (", env!("CARGO_PKG_VERSION"))),
            "{agent}"
        );
        let ours = ProviderAgent::Prefix(provider::kube_client::USER_AGENT_PREFIX.to_owned());
        assert!(ours.is_provider(provider::kube_client::user_agent()));
        assert!(!ours.is_provider(agent));
        assert!(!ours.is_provider("kubectl/v1.33.0 (linux/amd64) kubernetes/abc"));
        let foreign = ProviderAgent::Prefix("provider-aws-s3/".to_owned());
        assert!(
            foreign
                .is_provider("provider-aws-s3/v1.2.0 (linux/amd64) kubernetes/x/leader-election")
        );
        assert!(ProviderAgent::NotHarness.is_provider("kubectl/v1.33.0"));
        assert!(!ProviderAgent::NotHarness.is_provider(agent));
    }
}
