//! A small SigV4 signer (AWS Signature Version 4, header form), so that generated AWS
//! requests carry signatures the cloud accepts and reach the code behind authentication.
//!
//! It canonicalizes only what the generators produce: paths and query pairs of unreserved
//! characters (`A-Z a-z 0-9 - . _ ~` and `/`), which need no escaping.

use ring::{digest, hmac};

/// An access key and its secret.
#[derive(Debug, Clone, Copy)]
pub struct Key<'a> {
    /// The access key id, such as `AKIA...`.
    pub id: &'a str,
    /// The secret access key.
    pub secret: &'a str,
}

/// What one signature covers.
#[derive(Debug)]
pub struct Signing<'a> {
    /// The HTTP method.
    pub method: &'a str,
    /// The path, of unreserved characters and `/`.
    pub path: &'a str,
    /// The query pairs, of unreserved characters.
    pub query: &'a [(String, String)],
    /// The signed headers, names lowercase.
    pub headers: &'a [(String, String)],
    /// The payload's hash as sent in `x-amz-content-sha256`, or the body's.
    pub payload_hash: String,
    /// `YYYYMMDDTHHMMSSZ`.
    pub amz_date: &'a str,
    /// The region, such as `us-east-1`.
    pub region: &'a str,
    /// The service's signing name, such as `s3`.
    pub service: &'a str,
}

/// The lowercase hex SHA-256 of `data`.
#[must_use]
pub fn sha256_hex(data: &[u8]) -> String {
    hex(digest::digest(&digest::SHA256, data).as_ref())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn mac(key: &[u8], data: &str) -> Vec<u8> {
    hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), data.as_bytes())
        .as_ref()
        .to_vec()
}

/// The `Authorization` header value for `s` signed with `key`.
#[must_use]
pub fn authorization(s: &Signing<'_>, key: Key<'_>) -> String {
    let signed = sign(s, key);
    format!(
        "AWS4-HMAC-SHA256 Credential={}/{}, SignedHeaders={}, Signature={}",
        key.id, signed.scope, signed.headers, signed.signature
    )
}

/// The signature alone, lowercase hex (a presigned URL's `X-Amz-Signature`).
#[must_use]
pub fn signature(s: &Signing<'_>, key: Key<'_>) -> String {
    sign(s, key).signature
}

struct Signed {
    scope: String,
    headers: String,
    signature: String,
}

fn sign(s: &Signing<'_>, key: Key<'_>) -> Signed {
    let date = s.amz_date.get(..8).unwrap_or(s.amz_date);
    let mut query: Vec<&(String, String)> = s.query.iter().collect();
    query.sort();
    let query: Vec<String> = query.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut headers: Vec<(String, String)> = s
        .headers
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    headers.sort();
    let signed: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
    let signed = signed.join(";");
    let canonical_headers: String = headers.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
    let canonical = format!(
        "{}\n{}\n{}\n{canonical_headers}\n{signed}\n{}",
        s.method,
        if s.path.is_empty() { "/" } else { s.path },
        query.join("&"),
        s.payload_hash
    );
    let scope = format!("{date}/{}/{}/aws4_request", s.region, s.service);
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{}\n{scope}\n{}",
        s.amz_date,
        sha256_hex(canonical.as_bytes())
    );
    let k_date = mac(format!("AWS4{}", key.secret).as_bytes(), date);
    let k_region = mac(&k_date, s.region);
    let k_service = mac(&k_region, s.service);
    let k_signing = mac(&k_service, "aws4_request");
    Signed {
        scope,
        headers: signed,
        signature: hex(&mac(&k_signing, &to_sign)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The "get-vanilla" case of AWS's SigV4 test suite.
    #[test]
    fn the_get_vanilla_case_of_the_aws_suite_signs_as_aws_does() {
        let headers = [
            ("host".to_owned(), "example.amazonaws.com".to_owned()),
            ("x-amz-date".to_owned(), "20150830T123600Z".to_owned()),
        ];
        let s = Signing {
            method: "GET",
            path: "/",
            query: &[],
            headers: &headers,
            payload_hash: sha256_hex(b""),
            amz_date: "20150830T123600Z",
            region: "us-east-1",
            service: "service",
        };
        let key = Key {
            id: "AKIDEXAMPLE",
            secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        };
        assert_eq!(
            authorization(&s, key),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
             SignedHeaders=host;x-amz-date, \
             Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
        );
    }
}
