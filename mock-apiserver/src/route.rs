//! Request paths: which endpoint a path names.

/// A resource path: `/api/v1/…` or `/apis/{group}/{version}/…`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePath {
    /// API group, empty for core.
    pub group: String,
    /// API version.
    pub version: String,
    /// The namespace segment, when the path has one.
    pub namespace: Option<String>,
    /// The plural resource name.
    pub plural: String,
    /// The object name, for object paths.
    pub name: Option<String>,
    /// The subresource (`status`), when present.
    pub subresource: Option<String>,
}

/// What a path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/version`
    Version,
    /// `/healthz`, `/livez`, `/readyz`
    Health,
    /// `/api`
    CoreVersions,
    /// `/apis`
    Groups,
    /// `/apis/{group}`
    Group(String),
    /// `/api/v1` or `/apis/{group}/{version}`
    GroupVersion(String, String),
    /// `/openapi/v3`
    OpenApiIndex,
    /// `/openapi/v3/{api/v1 | apis/g/v}`
    OpenApiDocument(String),
    /// `/mock/v1/requests`: the request journal.
    Journal,
    /// `/metrics`: `apiserver_request_total`.
    Metrics,
    /// A resource or object path.
    Resource(ResourcePath),
    /// Anything else.
    Unknown,
}

/// Parses a request path (without the query).
///
/// The path is percent-decoded first and then split on `/`, as Go's `net/http` (which
/// decodes `URL.Path`) and the API server's request-info parser do. Path decoding is
/// `percent-encoding`'s rather than `form_urlencoded`'s: in a path `+` is a plus sign, not
/// a space.
pub fn parse(path: &str) -> Route {
    let path = percent_encoding::percent_decode_str(path).decode_utf8_lossy();
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        ["version"] => Route::Version,
        ["healthz" | "livez" | "readyz", ..] => Route::Health,
        ["api"] => Route::CoreVersions,
        ["api", version] => Route::GroupVersion(String::new(), (*version).to_owned()),
        ["api", version, rest @ ..] => resource("", version, rest),
        ["apis"] => Route::Groups,
        ["apis", group] => Route::Group((*group).to_owned()),
        ["apis", group, version] => Route::GroupVersion((*group).to_owned(), (*version).to_owned()),
        ["apis", group, version, rest @ ..] => resource(group, version, rest),
        ["openapi", "v3"] => Route::OpenApiIndex,
        ["openapi", "v3", rest @ ..] => Route::OpenApiDocument(rest.join("/")),
        ["mock", "v1", "requests"] => Route::Journal,
        ["metrics"] => Route::Metrics,
        _ => Route::Unknown,
    }
}

fn resource(group: &str, version: &str, rest: &[&str]) -> Route {
    let (namespace, rest) = match rest {
        ["namespaces", ns, plural, tail @ ..]
            if !(tail.is_empty() && matches!(*plural, "status" | "finalize")) =>
        {
            (Some((*ns).to_owned()), &rest[2..])
        }
        _ => (None, rest),
    };
    let (plural, name, subresource) = match rest {
        [plural] => (plural, None, None),
        [plural, name] => (plural, Some(*name), None),
        [plural, name, sub] => (plural, Some(*name), Some(*sub)),
        _ => return Route::Unknown,
    };
    Route::Resource(ResourcePath {
        group: group.to_owned(),
        version: version.to_owned(),
        namespace,
        plural: (*plural).to_owned(),
        name: name.map(str::to_owned),
        subresource: subresource.map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(
        group: &str,
        ns: Option<&str>,
        plural: &str,
        name: Option<&str>,
        sub: Option<&str>,
    ) -> Route {
        Route::Resource(ResourcePath {
            group: group.into(),
            version: if group.is_empty() { "v1" } else { "v1alpha1" }.into(),
            namespace: ns.map(Into::into),
            plural: plural.into(),
            name: name.map(Into::into),
            subresource: sub.map(Into::into),
        })
    }

    #[test]
    fn resource_paths_are_split_into_their_parts() {
        assert_eq!(
            parse("/apis/example.org/v1alpha1/buckets"),
            res("example.org", None, "buckets", None, None)
        );
        assert_eq!(
            parse("/apis/example.org/v1alpha1/namespaces/default/buckets/b1/status"),
            res(
                "example.org",
                Some("default"),
                "buckets",
                Some("b1"),
                Some("status")
            )
        );
        assert_eq!(
            parse("/api/v1/namespaces"),
            res("", None, "namespaces", None, None)
        );
        assert_eq!(
            parse("/api/v1/namespaces/default"),
            res("", None, "namespaces", Some("default"), None)
        );
        assert_eq!(
            parse("/api/v1/namespaces/default/status"),
            res("", None, "namespaces", Some("default"), Some("status"))
        );
        assert_eq!(
            parse("/api/v1/namespaces/default/secrets"),
            res("", Some("default"), "secrets", None, None)
        );
    }

    #[test]
    fn discovery_and_special_paths_are_recognised() {
        assert_eq!(parse("/version"), Route::Version);
        assert_eq!(parse("/api"), Route::CoreVersions);
        assert_eq!(
            parse("/apis/example.org/v1alpha1"),
            Route::GroupVersion("example.org".into(), "v1alpha1".into())
        );
        assert_eq!(
            parse("/openapi/v3/apis/example.org/v1alpha1"),
            Route::OpenApiDocument("apis/example.org/v1alpha1".into())
        );
        assert_eq!(parse("/mock/v1/requests"), Route::Journal);
        assert_eq!(parse("/nonsense"), Route::Unknown);
        assert_eq!(
            parse("/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Aa+b"),
            Route::Resource(ResourcePath {
                group: "rbac.authorization.k8s.io".into(),
                version: "v1".into(),
                namespace: None,
                plural: "clusterroles".into(),
                name: Some("system:a+b".into()),
                subresource: None,
            })
        );
        assert_eq!(parse("/api/v1/a/b/c/d"), Route::Unknown);
    }
}
