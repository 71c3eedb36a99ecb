//! Helpers for the AWS tests: requests signed with the SDK's own SigV4 signer for
//! in-process tests under paused time. The tests with the SDK's clients
//! (`sdk-tests/tests/it/`) use them too, and add the clients.

use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_smithy_runtime_api::client::identity::Identity;
use bytes::Bytes;
use http_body_util::Full;
use mock_cloud::MockCloud;

pub fn keys(id: &str, secret: &str) -> Credentials {
    Credentials::new(id, secret, None, None, "mock-cloud-test")
}

/// A request signed by the SDK's SigV4 signer at `time` for `service` in us-east-1.
#[allow(clippy::too_many_arguments)]
pub fn signed(
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    service: &str,
    credentials: &Credentials,
    time: SystemTime,
    s3: bool,
) -> http::Request<Full<Bytes>> {
    let mut request = Signing::new(method, uri, service)
        .headers(headers)
        .body(body);
    if !s3 {
        request = request.payload(Payload::NotS3);
    }
    request.sign(credentials, time)
}

/// What a signed request says of its payload.
#[derive(Debug, Clone, Copy)]
pub enum Payload<'a> {
    /// S3: `x-amz-content-sha256` is the body's SHA-256.
    Hashed,
    /// S3: `x-amz-content-sha256: UNSIGNED-PAYLOAD`.
    Unsigned,
    /// S3: `x-amz-content-sha256` is this marker (a streaming one).
    Marker(&'a str),
    /// Signed as every service but S3 signs: no `x-amz-content-sha256`, the path
    /// normalized and encoded twice.
    NotS3,
}

/// A request to sign with the SDK's own SigV4 signer, for in-process tests.
pub struct Signing<'a> {
    method: &'a str,
    uri: &'a str,
    host: &'a str,
    headers: Vec<(&'a str, &'a str)>,
    body: &'a [u8],
    service: &'a str,
    region: &'a str,
    payload: Payload<'a>,
    presigned: Option<Duration>,
}

impl<'a> Signing<'a> {
    /// An S3-style signed request (payload hashed) with no body, to host `mock.local`.
    pub fn new(method: &'a str, uri: &'a str, service: &'a str) -> Signing<'a> {
        Signing {
            method,
            uri,
            host: "mock.local",
            headers: Vec::new(),
            body: b"",
            service,
            region: "us-east-1",
            payload: Payload::Hashed,
            presigned: None,
        }
    }

    pub fn host(mut self, host: &'a str) -> Self {
        self.host = host;
        self
    }

    pub fn headers(mut self, headers: &[(&'a str, &'a str)]) -> Self {
        self.headers.extend_from_slice(headers);
        self
    }

    pub fn body(mut self, body: &'a [u8]) -> Self {
        self.body = body;
        self
    }

    pub fn payload(mut self, payload: Payload<'a>) -> Self {
        self.payload = payload;
        self
    }

    /// A presigned URL valid for `expires` (the signature in the query, the payload
    /// unsigned and undeclared).
    pub fn presigned(mut self, expires: Duration) -> Self {
        self.presigned = Some(expires);
        self
    }

    pub fn sign(self, credentials: &Credentials, time: SystemTime) -> http::Request<Full<Bytes>> {
        use aws_sigv4::http_request::{
            PayloadChecksumKind, PercentEncodingMode, SignatureLocation, UriPathNormalizationMode,
        };
        let full_uri = format!("http://{}{}", self.host, self.uri);
        let mut all: Vec<(&str, &str)> = self.headers.clone();
        all.push(("host", self.host));
        let mut settings = SigningSettings::default();
        let s3 = !matches!(self.payload, Payload::NotS3);
        if s3 {
            settings.percent_encoding_mode = PercentEncodingMode::Single;
            settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
            settings.uri_path_normalization_mode = UriPathNormalizationMode::Disabled;
        }
        let mut body = match self.payload {
            Payload::Hashed | Payload::NotS3 => SignableBody::Bytes(self.body),
            Payload::Unsigned => SignableBody::UnsignedPayload,
            Payload::Marker(marker) => SignableBody::Precomputed(marker.to_owned()),
        };
        if let Some(expires) = self.presigned {
            settings.signature_location = SignatureLocation::QueryParams;
            settings.expires_in = Some(expires);
            settings.payload_checksum_kind = PayloadChecksumKind::NoHeader;
            body = SignableBody::UnsignedPayload;
        }
        let identity: Identity = credentials.clone().into();
        let params = aws_sigv4::sign::v4::SigningParams::builder()
            .identity(&identity)
            .region(self.region)
            .name(self.service)
            .time(time)
            .settings(settings)
            .build()
            .unwrap()
            .into();
        let signable =
            SignableRequest::new(self.method, full_uri, all.iter().copied(), body).unwrap();
        let (instructions, _) = sign(signable, &params).unwrap().into_parts();
        let mut request = http::Request::builder().method(self.method).uri(self.uri);
        for (k, v) in &all {
            request = request.header(*k, *v);
        }
        let mut request = request
            .body(Full::new(Bytes::copy_from_slice(self.body)))
            .unwrap();
        instructions.apply_to_request_http1x(&mut request);
        request
    }
}

/// The time the cloud's clock reads now, on the wall clock (its epoch plus its clock).
pub fn cloud_now(cloud: &MockCloud) -> SystemTime {
    let epoch = SystemTime::UNIX_EPOCH + Duration::from_nanos(cloud.epoch().as_nanosecond() as u64);
    epoch + cloud.elapsed()
}

/// The body of a response as text.
pub async fn text(response: http::Response<mock_cloud::ResponseBody>) -> String {
    use http_body_util::BodyExt;
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// The text of the first `<tag>` in `xml`.
pub fn element<'a>(xml: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&format!("</{tag}>"))? + start;
    Some(&xml[start..end])
}
