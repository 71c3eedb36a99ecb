//! Form and query parameters: `application/x-www-form-urlencoded` pairs, decoded.

/// Decodes `a=1&b=x%20y` (with `+` as a space) into pairs, in order.
pub(crate) fn pairs(text: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(text)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// The first value of `key`.
pub(crate) fn get<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_decoded_with_plus_as_space_and_bare_keys_as_empty() {
        let p = pairs(b"Action=AssumeRole&RoleSessionName=a+b%2Fc&flag&=x");
        assert_eq!(get(&p, "Action"), Some("AssumeRole"));
        assert_eq!(get(&p, "RoleSessionName"), Some("a b/c"));
        assert_eq!(get(&p, "flag"), Some(""));
        assert_eq!(get(&p, "missing"), None);
    }
}
