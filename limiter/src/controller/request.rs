use std::fmt;

/// An object to reconcile: controller-runtime's `reconcile.Request`, a namespaced name.
///
/// `Display` is Go's `NamespacedName.String()`: `namespace/name`, with an empty namespace
/// giving `/name` (Crossplane's global limiter keys depend on that form).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Request {
    /// Namespace; empty for cluster-scoped objects.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl Request {
    /// A namespaced object.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Request {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// A cluster-scoped object.
    pub fn cluster(name: impl Into<String>) -> Self {
        Request::new("", name)
    }

    /// Parses `[namespace/]name`.
    #[must_use]
    pub fn parse(s: &str) -> Self {
        match s.split_once('/') {
            Some((ns, name)) => Request::new(ns, name),
            None => Request::cluster(s),
        }
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_like_go_namespaced_name() {
        assert_eq!(Request::parse("a").to_string(), "/a");
        assert_eq!(Request::parse("ns/a").to_string(), "ns/a");
    }
}
