//! SigV4 signatures from aws-sigv4, the signer of the AWS SDK for Rust, so that generated
//! AWS requests carry the signatures real clients send, and get past authentication to
//! the code behind it; or, where the input asks, a tampered one.

use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{
    PayloadChecksumKind, PercentEncodingMode, SignableBody, SignableRequest, SignatureLocation,
    SigningSettings, UriPathNormalizationMode, sign,
};
use aws_smithy_runtime_api::client::identity::Identity;

/// How to sign one request.
#[derive(Debug, Clone, Copy)]
pub struct Signer<'a> {
    /// The access key id.
    pub access_key: &'a str,
    /// Its secret.
    pub secret: &'a str,
    /// The region in the credential scope.
    pub region: &'a str,
    /// The service's signing name in the credential scope.
    pub service: &'a str,
    /// The signing time (`X-Amz-Date`).
    pub time: SystemTime,
    /// In the query string (a presigned URL) instead of the `Authorization` header.
    pub presigned: bool,
    /// S3's `x-amz-content-sha256: UNSIGNED-PAYLOAD` instead of the body's hash.
    pub unsigned_payload: bool,
    /// Replace the signature with zeros after signing.
    pub tamper: bool,
}

/// The wall-clock time of a jiff timestamp.
#[must_use]
pub fn system_time(at: jiff::Timestamp) -> SystemTime {
    let nanos = at.as_nanosecond();
    match u64::try_from(nanos) {
        Ok(n) => SystemTime::UNIX_EPOCH + Duration::from_nanos(n),
        Err(_) => SystemTime::UNIX_EPOCH,
    }
}

/// Signs `request`, whose body is `body`, in place: headers (`Authorization`,
/// `X-Amz-Date`, S3's `x-amz-content-sha256`) or query parameters (presigned). Returns
/// whether it is signed: aws-sigv4 refuses a request whose URI or headers it cannot read,
/// which is then sent as it is.
pub fn sign_request<B>(request: &mut http::Request<B>, body: &[u8], s: &Signer<'_>) -> bool {
    // aws-sigv4 panics applying an `Authorization` header that is not a valid header
    // value (a region with a control character); the SDKs never sign such a region.
    let visible = |t: &str| t.bytes().all(|b| (b' '..=b'~').contains(&b));
    if !visible(s.region) || !visible(s.service) || !visible(s.access_key) {
        return false;
    }
    let s3 = s.service == "s3";
    let mut settings = SigningSettings::default();
    if s3 {
        settings.percent_encoding_mode = PercentEncodingMode::Single;
        settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
        settings.uri_path_normalization_mode = UriPathNormalizationMode::Disabled;
    }
    let mut signable_body = if s3 && s.unsigned_payload {
        SignableBody::UnsignedPayload
    } else {
        SignableBody::Bytes(body)
    };
    if s.presigned {
        settings.signature_location = SignatureLocation::QueryParams;
        settings.expires_in = Some(Duration::from_secs(900));
        settings.payload_checksum_kind = PayloadChecksumKind::NoHeader;
        // S3's presigned URLs leave the payload unsigned; other services' sign its hash.
        if s3 {
            signable_body = SignableBody::UnsignedPayload;
        }
    }
    let identity: Identity = Credentials::new(s.access_key, s.secret, None, None, "fuzz").into();
    let Ok(params) = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region(s.region)
        .name(s.service)
        .time(s.time)
        .settings(settings)
        .build()
    else {
        return false;
    };
    let uri = format!("http://localhost{}", request.uri());
    let Ok(headers) = request
        .headers()
        .iter()
        .map(|(k, v)| v.to_str().map(|v| (k.as_str(), v)))
        .collect::<Result<Vec<_>, _>>()
    else {
        return false;
    };
    let method = request.method().as_str().to_owned();
    let Ok(signable) = SignableRequest::new(&method, uri, headers.into_iter(), signable_body)
    else {
        return false;
    };
    let Ok(output) = sign(signable, &params.into()) else {
        return false;
    };
    let (instructions, signature) = output.into_parts();
    // aws-smithy-http's query writer panics on an origin-form URI that reads as another
    // form once re-parsed (`//x?…`): the query goes onto the absolute URI, then back.
    let Ok(absolute) = format!("http://localhost{}", request.uri()).parse::<http::Uri>() else {
        return false;
    };
    *request.uri_mut() = absolute;
    instructions.apply_to_request_http1x(request);
    let origin = request
        .uri()
        .path_and_query()
        .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
    let Ok(origin) = origin.parse() else {
        return false;
    };
    *request.uri_mut() = origin;
    if s.tamper {
        let zeros = "0".repeat(signature.len());
        if let Some(auth) = request
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
        {
            let tampered = auth.replace(&signature, &zeros);
            if let Ok(value) = http::HeaderValue::from_str(&tampered) {
                request.headers_mut().insert("authorization", value);
            }
        }
        let uri = request.uri().to_string().replace(&signature, &zeros);
        if let Ok(uri) = uri.parse() {
            *request.uri_mut() = uri;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signed(tamper: bool, presigned: bool) -> http::Request<()> {
        let mut request = http::Request::get("/bkt-0?tagging")
            .header("host", "localhost")
            .body(())
            .unwrap();
        let s = Signer {
            access_key: "AKIDEXAMPLE",
            secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            region: "us-east-1",
            service: "s3",
            time: SystemTime::UNIX_EPOCH + Duration::from_secs(1_440_938_160),
            presigned,
            unsigned_payload: false,
            tamper,
        };
        assert!(sign_request(&mut request, b"", &s));
        request
    }

    #[test]
    fn a_signed_request_carries_the_credential_scope_and_a_tampered_one_zeros() {
        let good = signed(false, false);
        let auth = good.headers()["authorization"].to_str().unwrap();
        assert!(
            auth.starts_with(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/s3/aws4_request"
            ),
            "{auth}"
        );
        assert_eq!(good.headers()["x-amz-date"], "20150830T123600Z");
        let bad = signed(true, false);
        let auth = bad.headers()["authorization"].to_str().unwrap();
        assert!(
            auth.ends_with(&format!("Signature={}", "0".repeat(64))),
            "{auth}"
        );
    }

    #[test]
    fn a_presigned_request_carries_the_signature_in_its_query() {
        let uri = signed(false, true).uri().to_string();
        assert!(uri.contains("X-Amz-Signature="), "{uri}");
        assert!(
            uri.contains("X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Fus-east-1%2Fs3%2Faws4_request"),
            "{uri}"
        );
    }
}
