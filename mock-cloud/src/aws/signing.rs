//! SigV4's computations: the canonical request, the string to sign, the signing key and the
//! signature, as `aws/sigv4.rs`'s module docs describe them, and the hex and URI encodings
//! they use.

use std::borrow::Cow;

use http::HeaderMap;
use ring::{digest, hmac};

use super::sigv4::ALGORITHM;

/// What the canonical request is built from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Canonical<'a> {
    pub method: &'a str,
    /// The path as sent (percent-encoded).
    pub raw_path: &'a str,
    /// The query string as sent, if any.
    pub raw_query: Option<&'a str>,
    pub headers: &'a HeaderMap,
    /// The request's authority, for a signed `host` header the request does not carry
    /// (HTTP/2, or a request built in-process).
    pub authority: Option<&'a str>,
    /// S3 encodes the path once and does not normalize it; every other service twice.
    pub s3: bool,
    /// The hex SHA-256 of the payload, or S3's `UNSIGNED-PAYLOAD` and streaming markers.
    pub payload_hash: &'a str,
    /// Leave `X-Amz-Signature` out of the query (presigned URLs).
    pub presigned: bool,
}

/// The canonical request; `None` if a signed header is missing from the request.
pub(crate) fn canonical_request(c: &Canonical<'_>, signed_headers: &str) -> Option<String> {
    let mut out = String::with_capacity(512);
    out.push_str(c.method);
    out.push('\n');
    canonical_uri(&mut out, c.raw_path, c.s3);
    out.push('\n');
    canonical_query(&mut out, c.raw_query.unwrap_or(""), c.presigned);
    out.push('\n');
    for name in signed_headers.split(';') {
        out.push_str(name);
        out.push(':');
        let mut values = c.headers.get_all(name).iter().peekable();
        if values.peek().is_none() {
            if name == "host" {
                out.push_str(c.authority?);
                out.push('\n');
                continue;
            }
            return None;
        }
        let mut first = true;
        for value in values {
            if !first {
                out.push(',');
            }
            first = false;
            push_trimmed(&mut out, value.as_bytes());
        }
        out.push('\n');
    }
    out.push('\n');
    out.push_str(signed_headers);
    out.push('\n');
    out.push_str(c.payload_hash);
    Some(out)
}

/// A header value trimmed, with inner runs of spaces collapsed to one.
fn push_trimmed(out: &mut String, value: &[u8]) {
    let text = match std::str::from_utf8(value) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(value),
    };
    let trimmed = text.trim();
    if !trimmed.contains(['\t', ' ']) {
        // Nothing inside to collapse (the common case): one copy.
        out.push_str(trimmed);
        return;
    }
    let mut space = false;
    for ch in text.trim().chars() {
        if ch == ' ' || ch == '\t' {
            space = true;
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.push(ch);
    }
}

pub(super) fn canonical_uri(out: &mut String, raw_path: &str, s3: bool) {
    let path = if raw_path.is_empty() { "/" } else { raw_path };
    if s3 {
        let decoded = percent_decode(path.as_bytes());
        uri_encode(out, &decoded, false);
        return;
    }
    // Normalize (remove `.` and `..` segments and empty ones), then encode twice.
    let decoded = percent_decode(path.as_bytes());
    let mut segments: Vec<&[u8]> = Vec::new();
    for segment in decoded.split(|b| *b == b'/') {
        match segment {
            b"" | b"." => {}
            b".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    let trailing = decoded.ends_with(b"/") && !segments.is_empty();
    out.push('/');
    for (i, segment) in segments.iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        let mut once = String::new();
        uri_encode(&mut once, segment, true);
        uri_encode(out, once.as_bytes(), true);
    }
    if trailing {
        out.push('/');
    }
}

pub(super) fn canonical_query(out: &mut String, raw_query: &str, presigned: bool) {
    // Every pair encoded into one buffer, then sorted by (name, value) as slices of it:
    // two allocations however many parameters a presigned URL carries.
    let mut encoded = String::with_capacity(raw_query.len() + raw_query.len() / 4);
    let mut pairs: Vec<(usize, usize, usize)> = Vec::with_capacity(8);
    for pair in raw_query.split('&').filter(|pair| !pair.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let start = encoded.len();
        uri_encode(&mut encoded, &percent_decode(k.as_bytes()), true);
        let key_end = encoded.len();
        if presigned && &encoded[start..key_end] == "X-Amz-Signature" {
            encoded.truncate(start);
            continue;
        }
        uri_encode(&mut encoded, &percent_decode(v.as_bytes()), true);
        pairs.push((start, key_end, encoded.len()));
    }
    let part = |&(start, key_end, end): &(usize, usize, usize)| {
        (&encoded[start..key_end], &encoded[key_end..end])
    };
    pairs.sort_by(|a, b| part(a).cmp(&part(b)));
    for (i, pair) in pairs.iter().enumerate() {
        let (k, v) = part(pair);
        if i > 0 {
            out.push('&');
        }
        out.push_str(k);
        out.push('=');
        out.push_str(v);
    }
}

/// AWS's `UriEncode`: every byte but the unreserved characters as `%XX` (upper-case hex);
/// `/` kept unless `encode_slash`. Runs of unreserved characters are copied as one slice.
pub(crate) fn uri_encode(out: &mut String, bytes: &[u8], encode_slash: bool) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let keep = |b: u8| {
        b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'_' | b'.' | b'~')
            || (b == b'/' && !encode_slash)
    };
    out.reserve(bytes.len());
    let mut rest = bytes;
    while !rest.is_empty() {
        let run = rest.iter().position(|&b| !keep(b)).unwrap_or(rest.len());
        // A run of unreserved characters is ASCII, so always UTF-8.
        out.push_str(std::str::from_utf8(&rest[..run]).unwrap_or_default());
        let Some(&b) = rest.get(run) else { break };
        let escape = [
            b'%',
            DIGITS[usize::from(b >> 4)],
            DIGITS[usize::from(b & 15)],
        ];
        out.push_str(std::str::from_utf8(&escape).unwrap_or_default());
        rest = &rest[run + 1..];
    }
}

/// Decodes `%XX` escapes (a malformed escape stays as written); `+` stays `+`. Borrows
/// when there is nothing to decode.
pub(crate) fn percent_decode(bytes: &[u8]) -> Cow<'_, [u8]> {
    if !bytes.contains(&b'%') {
        return Cow::Borrowed(bytes);
    }
    Cow::Owned(percent_encoding::percent_decode(bytes).collect())
}

/// The string to sign.
pub(crate) fn string_to_sign(amz_date: &str, scope: &str, canonical_request: &str) -> String {
    let hash = digest::digest(&digest::SHA256, canonical_request.as_bytes());
    let mut out = String::with_capacity(200);
    out.push_str(ALGORITHM);
    out.push('\n');
    out.push_str(amz_date);
    out.push('\n');
    out.push_str(scope);
    out.push('\n');
    push_hex(&mut out, hash.as_ref());
    out
}

/// The signing key of `secret` for a scope's date, region and service.
pub(crate) fn signing_key(secret: &str, date: &str, region: &str, service: &str) -> hmac::Key {
    let mut key = Vec::with_capacity(4 + secret.len());
    key.extend_from_slice(b"AWS4");
    key.extend_from_slice(secret.as_bytes());
    let mut tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, &key), date.as_bytes());
    for part in [region, service, "aws4_request"] {
        tag = hmac::sign(
            &hmac::Key::new(hmac::HMAC_SHA256, tag.as_ref()),
            part.as_bytes(),
        );
    }
    hmac::Key::new(hmac::HMAC_SHA256, tag.as_ref())
}

/// The signature of `string_to_sign`, lower-case hex.
pub(crate) fn signature(key: &hmac::Key, string_to_sign: &str) -> String {
    let tag = hmac::sign(key, string_to_sign.as_bytes());
    let mut out = String::with_capacity(64);
    push_hex(&mut out, tag.as_ref());
    out
}

/// Compares two signatures in time independent of where they differ.
pub(crate) fn same_signature(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(64);
    push_hex(&mut out, digest::digest(&digest::SHA256, bytes).as_ref());
    out
}

/// Appends `bytes` as lower-case hex (a table lookup: `write!` costs a formatter call a
/// byte on the request path).
pub(crate) fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
}
