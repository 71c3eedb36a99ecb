//! Tolerant query-string parsing (kube sends a bare `?` and a leading `&`).

/// Decoded query parameters, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query(Vec<(String, String)>);

impl Query {
    /// Parses a raw query string; empty pairs are skipped and `+` is a space.
    pub fn parse(raw: &str) -> Self {
        Self(
            raw.split('&')
                .filter(|pair| !pair.is_empty())
                .map(|pair| {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    (decode(k), decode(v))
                })
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
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = || {
            text.get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        };
        match (bytes[i], hex()) {
            (b'+', _) => out.push(b' '),
            (b'%', Some(b)) => {
                out.push(b);
                i += 2;
            }
            (b, _) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
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
}
