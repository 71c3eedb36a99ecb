//! Form and query parameters: `application/x-www-form-urlencoded` pairs, decoded.

/// Decodes `a=1&b=x%20y` (with `+` as a space) into pairs, in order.
pub(crate) fn pairs(text: &[u8]) -> Vec<(String, String)> {
    text.split(|b| *b == b'&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let mut split = pair.splitn(2, |b| *b == b'=');
            let key = split.next().unwrap_or_default();
            let value = split.next().unwrap_or_default();
            (decode(key), decode(value))
        })
        .collect()
}

fn decode(bytes: &[u8]) -> String {
    let plus: Vec<u8> = bytes
        .iter()
        .map(|b| if *b == b'+' { b' ' } else { *b })
        .collect();
    String::from_utf8_lossy(&super::sigv4::percent_decode(&plus)).into_owned()
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
