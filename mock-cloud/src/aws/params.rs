//! Form and query parameters: `application/x-www-form-urlencoded` pairs, decoded.

use std::borrow::Cow;

/// Decoded pairs that borrow from the text they were read from wherever nothing had to be
/// decoded (a request's query: no copy per parameter on every request).
pub(crate) type Borrowed<'a> = Vec<(Cow<'a, str>, Cow<'a, str>)>;

/// Decodes `a=1&b=x%20y` (with `+` as a space) into pairs, in order.
pub(crate) fn pairs(text: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(text)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// [`pairs`], borrowing from `text` where a name or value has nothing to decode. The same
/// pairs as `form_urlencoded::parse`, which decodes every pair that has a `%` or a `+`
/// (or is not UTF-8); the rest, most of a presigned URL's, are only checked.
pub(crate) fn borrowed_pairs(text: &[u8]) -> Borrowed<'_> {
    let plain = |bytes: &[u8]| !bytes.iter().any(|&b| b == b'%' || b == b'+');
    text.split(|&b| b == b'&')
        .filter(|pair| !pair.is_empty())
        .filter_map(|pair| {
            if plain(pair)
                && let Ok(pair) = std::str::from_utf8(pair)
            {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                return Some((Cow::Borrowed(k), Cow::Borrowed(v)));
            }
            form_urlencoded::parse(pair).next()
        })
        .collect()
}

/// Owned copies of borrowed pairs.
pub(crate) fn owned(pairs: &[(Cow<'_, str>, Cow<'_, str>)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.as_ref().to_owned(), v.as_ref().to_owned()))
        .collect()
}

/// The first value of `key`.
pub(crate) fn get<'a, S: AsRef<str>>(pairs: &'a [(S, S)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k.as_ref() == key)
        .map(|(_, v)| v.as_ref())
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
        let b = borrowed_pairs(b"X-Amz-Credential=k%2F20260101&X-Amz-Date=20260101T000000Z");
        assert!(matches!(b[0].1, Cow::Owned(_)), "decoded: a copy");
        assert!(
            matches!(b[1].1, Cow::Borrowed(_)),
            "nothing to decode: borrowed"
        );
        assert_eq!(get(&b, "X-Amz-Credential"), Some("k/20260101"));
        assert_eq!(
            owned(&b)[1],
            ("X-Amz-Date".into(), "20260101T000000Z".into())
        );
        for text in [
            &b"a=1&&b=x%20y+z&c&=v&d==e&%zz=%41%&f=%FF&g=\xff&k=v"[..],
            b"",
            b"&",
            b"plain=yes",
        ] {
            assert_eq!(
                owned(&borrowed_pairs(text)),
                pairs(text),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }
}
