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

/// An STS client of `credentials` (none: only unsigned operations work).
pub fn sts(url: &str, credentials: Option<Credentials>) -> aws_sdk_sts::Client {
    let mut config = aws_sdk_sts::Config::builder()
        .behavior_version(aws_sdk_sts::config::BehaviorVersion::latest())
        .endpoint_url(url)
        .region(aws_sdk_sts::config::Region::new("us-east-1"))
        .retry_config(aws_smithy_types::retry::RetryConfig::disabled())
        .http_client(http_client());
    if let Some(credentials) = credentials {
        config = config.credentials_provider(credentials);
    }
    aws_sdk_sts::Client::from_conf(config.build())
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
    let full_uri = format!("http://mock.local{uri}");
    let mut all: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    all.push(("host".into(), "mock.local".into()));
    let mut settings = SigningSettings::default();
    if s3 {
        settings.percent_encoding_mode = aws_sigv4::http_request::PercentEncodingMode::Single;
        settings.payload_checksum_kind = aws_sigv4::http_request::PayloadChecksumKind::XAmzSha256;
        settings.uri_path_normalization_mode =
            aws_sigv4::http_request::UriPathNormalizationMode::Disabled;
    }
    let identity: Identity = credentials.clone().into();
    let params = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region("us-east-1")
        .name(service)
        .time(time)
        .settings(settings)
        .build()
        .unwrap()
        .into();
    let signable = SignableRequest::new(
        method,
        full_uri.clone(),
        all.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        SignableBody::Bytes(body),
    )
    .unwrap();
    let (instructions, _) = sign(signable, &params).unwrap().into_parts();
    let mut request = http::Request::builder().method(method).uri(uri);
    for (k, v) in &all {
        request = request.header(k, v);
    }
    let mut request = request
        .body(Full::new(Bytes::copy_from_slice(body)))
        .unwrap();
    instructions.apply_to_request_http1x(&mut request);
    request
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
