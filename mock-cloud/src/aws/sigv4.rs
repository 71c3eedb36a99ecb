//! AWS Signature Version 4: reading a request's signature (the `Authorization` header or
//! a presigned URL's query) and computing the signature the request should carry.
//!
//! # Semantics
//! The canonical request is built as AWS documents it: the method; the path, each segment
//! URI-encoded once for S3 and twice (after normalizing) for every other service; the
//! query parameters sorted by name then value, each URI-encoded (a presigned URL's
//! `X-Amz-Signature` left out); the signed headers, lower-case, values trimmed with inner
//! runs of spaces collapsed, repeated headers joined by commas; the signed header list;
//! and the payload hash. The signing key is HMAC-SHA256 chained over the date, region,
//! service and `aws4_request`, starting from `AWS4` + the secret.
//!
//! Building the canonical request and the signature is `aws/signing.rs`. Everything here
//! and there is a pure function of its inputs; `aws/auth.rs` decides what a failed check
//! answers.

use std::borrow::Cow;

use http::HeaderMap;

/// The only algorithm accepted.
pub(crate) const ALGORITHM: &str = "AWS4-HMAC-SHA256";
/// The SHA-256 of an empty payload.
#[cfg(test)]
pub(crate) const EMPTY_SHA256: &str =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
/// The longest a presigned URL may live: seven days.
pub(crate) const MAX_PRESIGNED_EXPIRY_S: u64 = 604_800;

/// The signature a request carries, parsed but not yet checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Signed<'a> {
    /// The access key ID of the credential.
    pub access_key: &'a str,
    /// The credential scope: `date/region/service/aws4_request`.
    pub scope: &'a str,
    /// The scope's date, `YYYYMMDD`.
    pub date: &'a str,
    /// The scope's region.
    pub region: &'a str,
    /// The scope's service name.
    pub service: &'a str,
    /// The signed header names, `;`-separated, lower-case.
    pub signed_headers: &'a str,
    /// The signature, lower-case hex.
    pub signature: &'a str,
    /// `X-Amz-Date` (or `Date`), `YYYYMMDDTHHMMSSZ`.
    pub amz_date: &'a str,
    /// For a presigned URL, `X-Amz-Expires` in seconds.
    pub presigned_expires: Option<u64>,
    /// `X-Amz-Security-Token`, for temporary credentials.
    pub security_token: Option<&'a str>,
}

/// Why a request's signature could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// Not signed at all (no `Authorization` header, no `X-Amz-Algorithm` query).
    Missing,
    /// Signed, but not in a shape SigV4 allows; the message says what is wrong.
    Malformed(String),
    /// Signed with Signature Version 2 (`Authorization: AWS key:signature`, or a presigned
    /// URL's `AWSAccessKeyId` and `Signature`), which mock-cloud does not accept.
    SignatureV2,
}

/// Whether a request is signed with Signature Version 2, S3's legacy scheme.
pub(crate) fn is_signature_v2(headers: &HeaderMap, query: Option<&str>) -> bool {
    match headers.get(http::header::AUTHORIZATION) {
        Some(value) => value.as_bytes().starts_with(b"AWS "),
        None => query.is_some_and(|q| {
            query_value(q, "AWSAccessKeyId").is_some() && query_value(q, "Signature").is_some()
        }),
    }
}

/// The credential scope's service name, if the request carries a SigV4 credential, by the
/// cheapest look: enough to route a request before its signature is checked.
pub(crate) fn scope_service<'a>(headers: &'a HeaderMap, query: Option<&'a str>) -> Option<&'a str> {
    let credential = match headers.get(http::header::AUTHORIZATION) {
        Some(value) => {
            let value = value.to_str().ok()?;
            let rest = value.strip_prefix(ALGORITHM)?;
            let start = rest.find("Credential=")? + "Credential=".len();
            let end = rest[start..]
                .find([',', ' '])
                .map_or(rest.len(), |e| start + e);
            &rest[start..end]
        }
        None => query_value(query?, "X-Amz-Credential")?,
    };
    // The credential may be percent-encoded in a query (`%2F` for `/`).
    let separator = if credential.contains('/') { "/" } else { "%2F" };
    let mut parts = credential.rsplitn(3, separator);
    parts.next()?;
    parts.next()
}

/// The raw value of `key` in a query string.
fn query_value<'a>(query: &'a str, key: &str) -> Option<&'a str> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

/// Reads the signature from the `Authorization` header, or else from a presigned URL's
/// query (`decoded_query` holds the query's parameters, decoded).
pub(crate) fn read<'a>(
    headers: &'a HeaderMap,
    decoded_query: &'a [(Cow<'a, str>, Cow<'a, str>)],
) -> Result<Signed<'a>, Unreadable> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let raw_query = decoded_query.iter().map(|(k, _)| k.as_ref());
    let v2_query = raw_query.clone().any(|k| k == "AWSAccessKeyId")
        && raw_query.clone().any(|k| k == "Signature");
    if let Some(value) = headers.get(http::header::AUTHORIZATION) {
        if value.as_bytes().starts_with(b"AWS ") {
            return Err(Unreadable::SignatureV2);
        }
        let value = value
            .to_str()
            .map_err(|_| Unreadable::Malformed("the Authorization header is not ASCII".into()))?;
        let amz_date = header("x-amz-date").or_else(|| header("date"));
        return read_header(value, amz_date, header("x-amz-security-token"));
    }
    let param = |name: &str| {
        decoded_query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_ref())
    };
    let Some(algorithm) = param("X-Amz-Algorithm") else {
        return Err(if v2_query {
            Unreadable::SignatureV2
        } else {
            Unreadable::Missing
        });
    };
    if algorithm != ALGORITHM {
        return Err(Unreadable::Malformed(format!(
            "X-Amz-Algorithm only supports \"{ALGORITHM}\""
        )));
    }
    let missing = |name: &str| {
        Unreadable::Malformed(format!(
            "Query-string authentication requires the {name} parameter"
        ))
    };
    let credential = param("X-Amz-Credential").ok_or_else(|| missing("X-Amz-Credential"))?;
    let signed_headers =
        param("X-Amz-SignedHeaders").ok_or_else(|| missing("X-Amz-SignedHeaders"))?;
    let signature = param("X-Amz-Signature").ok_or_else(|| missing("X-Amz-Signature"))?;
    let amz_date = param("X-Amz-Date").ok_or_else(|| missing("X-Amz-Date"))?;
    let expires = param("X-Amz-Expires").ok_or_else(|| missing("X-Amz-Expires"))?;
    let expires = expires
        .parse::<u64>()
        .ok()
        .filter(|e| (1..=MAX_PRESIGNED_EXPIRY_S).contains(e))
        .ok_or_else(|| {
            Unreadable::Malformed(format!(
                "X-Amz-Expires must be a number of seconds from 1 to {MAX_PRESIGNED_EXPIRY_S}"
            ))
        })?;
    let mut signed = credential_parts(credential)?;
    signed.signed_headers = signed_headers;
    signed.signature = signature;
    signed.amz_date = amz_date;
    signed.presigned_expires = Some(expires);
    signed.security_token = param("X-Amz-Security-Token").or(header("x-amz-security-token"));
    Ok(signed)
}

fn read_header<'a>(
    value: &'a str,
    amz_date: Option<&'a str>,
    security_token: Option<&'a str>,
) -> Result<Signed<'a>, Unreadable> {
    let malformed = |what: &str| Unreadable::Malformed(what.to_owned());
    let rest = value
        .strip_prefix(ALGORITHM)
        .and_then(|r| r.strip_prefix(' '))
        .ok_or_else(|| malformed("Unsupported Authorization Type"))?;
    let (mut credential, mut signed_headers, mut signature) = (None, None, None);
    for part in rest.split(',') {
        let part = part.trim();
        if let Some(v) = part.strip_prefix("Credential=") {
            credential = Some(v);
        } else if let Some(v) = part.strip_prefix("SignedHeaders=") {
            signed_headers = Some(v);
        } else if let Some(v) = part.strip_prefix("Signature=") {
            signature = Some(v);
        } else {
            return Err(malformed(&format!(
                "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters; found {part:?}"
            )));
        }
    }
    let missing = |name: &str| {
        malformed(&format!(
            "Authorization header requires '{name}' parameter."
        ))
    };
    let mut signed = credential_parts(credential.ok_or_else(|| missing("Credential"))?)?;
    signed.signed_headers = signed_headers.ok_or_else(|| missing("SignedHeaders"))?;
    signed.signature = signature.ok_or_else(|| missing("Signature"))?;
    signed.amz_date = amz_date.ok_or_else(|| {
        malformed(
            "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.",
        )
    })?;
    signed.security_token = security_token;
    Ok(signed)
}

/// `AKID/20150830/us-east-1/service/aws4_request`.
fn credential_parts(credential: &str) -> Result<Signed<'_>, Unreadable> {
    let Some((access_key, scope)) = credential.split_once('/') else {
        return Err(Unreadable::Malformed(format!(
            "Credential should be scoped to a valid region, not {credential:?}"
        )));
    };
    let mut parts = scope.split('/');
    let parts = [
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ];
    let [
        Some(date),
        Some(region),
        Some(service),
        Some("aws4_request"),
        None,
    ] = parts
    else {
        return Err(Unreadable::Malformed(format!(
            "Credential should be scoped with a valid terminator: 'aws4_request', not {scope:?}"
        )));
    };
    if access_key.is_empty() || date.len() != 8 || region.is_empty() || service.is_empty() {
        return Err(Unreadable::Malformed(format!(
            "Credential should be 'ACCESS_KEY/YYYYMMDD/region/service/aws4_request', not {credential:?}"
        )));
    }
    Ok(Signed {
        access_key,
        scope,
        date,
        region,
        service,
        signed_headers: "",
        signature: "",
        amz_date: "",
        presigned_expires: None,
        security_token: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aws::signing::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(*k, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    /// A GET of `raw_path` with no query and an empty payload.
    fn get<'a>(h: &'a HeaderMap, raw_path: &'a str, s3: bool) -> Canonical<'a> {
        Canonical {
            method: "GET",
            raw_path,
            raw_query: None,
            headers: h,
            authority: None,
            s3,
            payload_hash: EMPTY_SHA256,
            presigned: false,
        }
    }

    fn sign(
        c: &Canonical<'_>,
        signed_headers: &str,
        secret: &str,
        amz_date: &str,
        scope: &str,
    ) -> String {
        let request = canonical_request(c, signed_headers).unwrap();
        let parts: Vec<&str> = scope.split('/').collect();
        let key = signing_key(secret, parts[0], parts[1], parts[2]);
        signature(&key, &string_to_sign(amz_date, scope, &request))
    }

    /// AWS's SigV4 test suite, `get-vanilla`.
    #[test]
    fn the_get_vanilla_vector_of_the_aws_test_suite_signs_as_published() {
        let h = headers(&[
            ("host", "example.amazonaws.com"),
            ("x-amz-date", "20150830T123600Z"),
        ]);
        let c = get(&h, "/", false);
        let sig = sign(
            &c,
            "host;x-amz-date",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            "20150830T123600Z",
            "20150830/us-east-1/service/aws4_request",
        );
        assert_eq!(
            sig,
            "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
        );
    }

    /// The S3 documentation's example: GET /test.txt with a Range header.
    #[test]
    fn the_s3_documentation_example_signs_as_published() {
        let h = headers(&[
            ("host", "examplebucket.s3.amazonaws.com"),
            ("range", "bytes=0-9"),
            ("x-amz-content-sha256", EMPTY_SHA256),
            ("x-amz-date", "20130524T000000Z"),
        ]);
        let c = get(&h, "/test.txt", true);
        let sig = sign(
            &c,
            "host;range;x-amz-content-sha256;x-amz-date",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "20130524T000000Z",
            "20130524/us-east-1/s3/aws4_request",
        );
        assert_eq!(
            sig,
            "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
    }

    #[test]
    fn query_parameters_are_sorted_and_encoded_and_a_presigned_signature_is_left_out() {
        let mut out = String::new();
        canonical_query(&mut out, "b=2&a=x%20y&X-Amz-Signature=abc&tagging", true);
        assert_eq!(out, "a=x%20y&b=2&tagging=");
    }

    #[test]
    fn paths_are_encoded_once_for_s3_and_normalized_and_twice_for_other_services() {
        let mut s3 = String::new();
        canonical_uri(&mut s3, "/bucket/a%20b/../c", true);
        assert_eq!(s3, "/bucket/a%20b/../c");
        let mut other = String::new();
        canonical_uri(&mut other, "/a%20b/./c/../d", false);
        assert_eq!(other, "/a%2520b/d");
    }

    #[test]
    fn header_values_are_trimmed_and_repeated_headers_joined() {
        let h = headers(&[
            ("my-header", "  a   b  "),
            ("my-header", "c"),
            ("host", "h"),
        ]);
        let c = get(&h, "/", false);
        let request = canonical_request(&c, "host;my-header").unwrap();
        assert!(request.contains("\nmy-header:a b,c\n"), "{request}");
        assert!(canonical_request(&c, "host;x-missing").is_none());
    }

    #[test]
    fn authorization_headers_are_read_and_malformed_ones_named() {
        let h = headers(&[
            (
                "authorization",
                "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/sts/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc",
            ),
            ("x-amz-date", "20150830T123600Z"),
        ]);
        let signed = read(&h, &[]).unwrap();
        assert_eq!(
            (signed.access_key, signed.region, signed.service),
            ("AKID", "us-east-1", "sts")
        );
        assert_eq!(signed.signed_headers, "host;x-amz-date");
        assert_eq!(scope_service(&h, None), Some("sts"));
        let bad = headers(&[(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=AKID/2015/x, Signature=a",
        )]);
        assert!(matches!(read(&bad, &[]), Err(Unreadable::Malformed(_))));
        assert_eq!(read(&HeaderMap::new(), &[]), Err(Unreadable::Missing));
        let v2 = headers(&[("authorization", "AWS AKID:c2lnbmF0dXJl")]);
        assert_eq!(read(&v2, &[]), Err(Unreadable::SignatureV2));
        assert!(is_signature_v2(&v2, None));
        let presigned_v2 = [
            (Cow::from("AWSAccessKeyId"), Cow::from("AKID")),
            (Cow::from("Signature"), Cow::from("x")),
        ];
        assert_eq!(
            read(&HeaderMap::new(), &presigned_v2),
            Err(Unreadable::SignatureV2)
        );
        assert!(is_signature_v2(
            &HeaderMap::new(),
            Some("AWSAccessKeyId=AKID&Expires=1&Signature=x")
        ));
        let query = "X-Amz-Credential=AKID%2F20150830%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=x";
        assert_eq!(scope_service(&HeaderMap::new(), Some(query)), Some("s3"));
    }

    #[test]
    fn signatures_compare_equal_only_when_identical() {
        assert!(same_signature("abc", "abc"));
        assert!(!same_signature("abc", "abd"));
        assert!(!same_signature("abc", "ab"));
    }
}
