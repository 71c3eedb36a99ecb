//! The harness's own Kubernetes requests: the `User-Agent` that tells them apart from the
//! provider's, and a count of them by verb (subtracted from the API server's metrics when
//! those have no per-client label).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use kube::client::Body;

/// The `User-Agent` of the harness's own Kubernetes requests; every other request at the API
/// server is the provider's.
pub const HARNESS_USER_AGENT: &str = "harness";

/// The harness's own requests to the provider's API group, by verb.
#[derive(Clone, Debug, Default)]
pub struct OwnRequests(Arc<Mutex<BTreeMap<&'static str, u64>>>);

impl OwnRequests {
    /// Counts `request` if it is for the provider's group.
    pub fn count(&self, request: &http::Request<Body>) {
        let path = request.uri().path();
        let Some(rest) = path.strip_prefix("/apis/") else {
            return;
        };
        if rest.split('/').next() == Some(provider::crd::GROUP) {
            let query = request.uri().query().unwrap_or_default();
            let verb = mock_apiserver::Verb::of(request.method(), path, query).as_str();
            *self
                .0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(verb)
                .or_default() += 1;
        }
    }

    /// The counts so far.
    #[must_use]
    pub fn snapshot(&self) -> BTreeMap<&'static str, u64> {
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
            http::HeaderValue::from_static(HARNESS_USER_AGENT),
        );
        req
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_requests_to_the_providers_group_are_counted() {
        let own = OwnRequests::default();
        let request = |path: &str| {
            http::Request::get(path)
                .body(Body::empty())
                .expect("valid request")
        };
        own.count(&request(
            "/apis/mockcloud.example.org/v1alpha1/namespaces/a/buckets",
        ));
        own.count(&request("/api/v1/namespaces/a/secrets"));
        own.count(&request("/apis/mockcloud.example.org.evil/v1/x"));
        assert_eq!(own.snapshot().get("list"), Some(&1));
        assert_eq!(own.snapshot().values().sum::<u64>(), 1);
    }
}
