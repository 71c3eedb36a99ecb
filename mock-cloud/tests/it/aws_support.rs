//! Helpers for the AWS tests: a cloud served on loopback with real SDK clients pointed at
//! it, and requests signed with the SDK's own SigV4 signer for in-process tests under
//! paused time.

use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_smithy_runtime_api::client::identity::Identity;
use bytes::Bytes;
use http_body_util::Full;
use mock_cloud::{Config, MockCloud};
use tokio::sync::oneshot;

/// A cloud on a loopback socket, stopped when dropped.
pub struct Served {
    pub url: String,
    pub cloud: MockCloud,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

pub async fn serve(config: Config) -> Served {
    let cloud = MockCloud::new(config).expect("valid config");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(mock_cloud::serve(listener, cloud.clone(), async {
        stopped.await.ok();
    }));
    Served {
        url,
        cloud,
        stop: Some(stop),
    }
}

fn http_client() -> aws_smithy_runtime_api::client::http::SharedHttpClient {
    aws_smithy_http_client::Builder::new().build_http()
}

/// An S3 client of `credentials` in `region`, path-style, no retries unless `retry` says.
pub fn s3(
    url: &str,
    credentials: Credentials,
    region: &str,
    retry: aws_smithy_types::retry::RetryConfig,
) -> aws_sdk_s3::Client {
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
        .endpoint_url(url)
        .region(aws_sdk_s3::config::Region::new(region.to_owned()))
        .credentials_provider(credentials)
        .force_path_style(true)
        .retry_config(retry)
        .http_client(http_client())
        .build();
    aws_sdk_s3::Client::from_conf(config)
}

/// The default account's S3 client in us-east-1, without retries.
pub fn default_s3(url: &str) -> aws_sdk_s3::Client {
    s3(
        url,
        keys("default", "default"),
        "us-east-1",
        aws_smithy_types::retry::RetryConfig::disabled(),
    )
}

/// An STS client of `credentials` (none: only unsigned operations work), without retries.
pub fn sts(url: &str, credentials: Option<Credentials>) -> aws_sdk_sts::Client {
    sts_retrying(
        url,
        credentials,
        aws_smithy_types::retry::RetryConfig::disabled(),
    )
}

/// An STS client of `credentials` that retries as `retry` says.
pub fn sts_retrying(
    url: &str,
    credentials: Option<Credentials>,
    retry: aws_smithy_types::retry::RetryConfig,
) -> aws_sdk_sts::Client {
    let mut config = aws_sdk_sts::Config::builder()
        .behavior_version(aws_sdk_sts::config::BehaviorVersion::latest())
        .endpoint_url(url)
        .region(aws_sdk_sts::config::Region::new("us-east-1"))
        .retry_config(retry)
        .http_client(http_client());
    if let Some(credentials) = credentials {
        config = config.credentials_provider(credentials);
    }
    aws_sdk_sts::Client::from_conf(config.build())
}

/// An EC2 client of `credentials` in `region` that retries as `retry` says.
pub fn ec2(
    url: &str,
    credentials: Credentials,
    region: &str,
    retry: aws_smithy_types::retry::RetryConfig,
) -> aws_sdk_ec2::Client {
    let config = aws_sdk_ec2::Config::builder()
        .behavior_version(aws_sdk_ec2::config::BehaviorVersion::latest())
        .endpoint_url(url)
        .region(aws_sdk_ec2::config::Region::new(region.to_owned()))
        .credentials_provider(credentials)
        .retry_config(retry)
        .http_client(http_client())
        .build();
    aws_sdk_ec2::Client::from_conf(config)
}

/// The default account's EC2 client in us-east-1, without retries.
pub fn default_ec2(url: &str) -> aws_sdk_ec2::Client {
    ec2(
        url,
        keys("default", "default"),
        "us-east-1",
        aws_smithy_types::retry::RetryConfig::disabled(),
    )
}

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

/// A DynamoDB client of `credentials` in us-east-1 that retries as `retry` says.
pub fn dynamodb(
    url: &str,
    credentials: Credentials,
    retry: aws_smithy_types::retry::RetryConfig,
) -> aws_sdk_dynamodb::Client {
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
        .endpoint_url(url)
        .region(aws_sdk_dynamodb::config::Region::new("us-east-1"))
        .credentials_provider(credentials)
        .retry_config(retry)
        .http_client(http_client())
        .build();
    aws_sdk_dynamodb::Client::from_conf(config)
}
