//! Tolerant query-string parsing (kube sends a bare `?` and a leading `&`).
//!
//! Decoding is `form_urlencoded`'s, which is what Go's `url.ParseQuery` (the API server's)
//! does to a query: pairs split on `&`, empty pairs skipped, `+` is a space, `%XX` escapes
//! decoded. One difference: Go drops a pair with a malformed escape (`%zz`), this keeps it
//! with the escape as written.

/// Decoded query parameters, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query(Vec<(String, String)>);

impl Query {
    /// Parses a raw query string; empty pairs are skipped and `+` is a space.
    pub fn parse(raw: &str) -> Self {
        Self(
            form_urlencoded::parse(raw.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }

    /// The first value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether `key` is `true` or `1`.
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }

    /// A boolean option (`force`, `orphanDependents`) as the apiserver's query conversion
    /// reads it (`Convert_Slice_string_To_bool` in apimachinery's `runtime/conversion.go`):
    /// absent is `None`; `0` and `false` in any case are false; any other value, `True`
    /// and the empty one among them, is true. The official Python client sends `True`.
    pub fn bool_option(&self, key: &str) -> Option<bool> {
        self.get(key)
            .map(|v| !(v == "0" || v.eq_ignore_ascii_case("false")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_style_queries_with_leading_ampersands_parse() {
        let q = Query::parse(
            "&watch=true&fieldSelector=metadata.name%3Db2&labelSelector=a+in+(x)&allowWatchBookmarks=1",
        );
        assert!(q.flag("watch"));
        assert!(q.flag("allowWatchBookmarks"));
        assert_eq!(q.get("fieldSelector"), Some("metadata.name=b2"));
        assert_eq!(q.get("labelSelector"), Some("a in (x)"));
        assert_eq!(Query::parse(""), Query::default());
        assert_eq!(Query::parse("a=%zz%4").get("a"), Some("%zz%4"));
    }

    #[test]
    fn boolean_options_read_as_the_apiserver_converts_them() {
        let q = Query::parse("a=True&b=1&c=&d=yes&e=FALSE&f=0&g=false");
        for key in ["a", "b", "c", "d"] {
            assert_eq!(q.bool_option(key), Some(true), "{key}");
        }
        for key in ["e", "f", "g"] {
            assert_eq!(q.bool_option(key), Some(false), "{key}");
        }
        assert_eq!(q.bool_option("h"), None);
    }
}
