//! `circuit.EventSource` (breaker.go:72-91): the watched object behind an event.

use std::fmt;

/// The watched object that triggered an event: its kind, name and namespace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct EventSource {
    /// The kind of the object's GroupVersionKind.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its namespace; empty for a cluster-scoped object.
    pub namespace: String,
}

impl EventSource {
    /// A namespaced object.
    pub fn new(
        kind: impl Into<String>,
        namespace: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        EventSource {
            kind: kind.into(),
            name: name.into(),
            namespace: namespace.into(),
        }
    }

    /// Parses `Kind/name` (cluster-scoped) or `Kind/namespace/name`.
    #[must_use]
    pub fn parse(s: &str) -> Self {
        let (kind, rest) = s.split_once('/').unwrap_or((s, ""));
        match rest.split_once('/') {
            Some((ns, name)) => EventSource::new(kind, ns, name),
            None => EventSource::new(kind, "", rest),
        }
    }
}

impl fmt::Display for EventSource {
    /// `EventSource.String()`: `Kind/name`, or `Kind/name (namespace)` (breaker.go:86-91).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{}/{}", self.kind, self.name)
        } else {
            write!(f, "{}/{} ({})", self.kind, self.name, self.namespace)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_prints_its_namespace_in_parentheses_as_go_does() {
        assert_eq!(EventSource::parse("XBucket/a").to_string(), "XBucket/a");
        assert_eq!(
            EventSource::parse("Bucket/team-a/b").to_string(),
            "Bucket/b (team-a)"
        );
    }
}
