//! The per-request path of mock-cloud in process, without sockets: what one request costs
//! from `MockCloud::handle` to its response, journal entry included.
//!
//! - `head_bucket_presigned`: S3 HeadBucket by a presigned URL (the request of
//!   `bench-aws.sh`): routing, the SigV4 signature verified in full, the per-bucket read
//!   quota checked, the journal written;
//! - `head_bucket_header_signed`: the same with the signature in `Authorization` (as the
//!   SDKs send it, `x-amz-content-sha256` checked);
//! - `generic_get`: `GET /v1/accounts/default/buckets/b1` with a bearer token (the request
//!   of the `loadgen` example against wiremock).
//!
//! Run: `cargo bench -p mock-cloud --bench request_path`. The requests are built outside
//! the timed part (`iter_batched`); each timed call is one `handle` on a current-thread
//! runtime. Quotas are raised so that nothing is throttled, but they are still checked.

use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{
    PayloadChecksumKind, PercentEncodingMode, SignableBody, SignableRequest, SignatureLocation,
    SigningSettings, UriPathNormalizationMode, sign,
};
use aws_smithy_runtime_api::client::identity::Identity;
use bytes::Bytes;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use http::Request;
use http_body_util::Full;
use mock_cloud::{Config, MockCloud};

const CONFIG: &str = r#"
accounts:
  - name: default
    tokens: [default]
    aws:
      account_id: "000000000000"
      access_keys: [{ id: default, secret: default }]
    quotas:
      classes:
        read: { burst: 1000000000, per_second: 1000000000 }
      services:
        s3:
          classes:
            read: { burst: 1000000000, per_second: 1000000000, per: resource }
"#;

/// `method /bench` (HEAD: HeadBucket, PUT: CreateBucket) signed for S3 at `time`, in the
/// query (`presigned`) or the header.
fn signed(method: &str, time: SystemTime, presigned: bool) -> Request<Full<Bytes>> {
    let mut settings = SigningSettings::default();
    settings.percent_encoding_mode = PercentEncodingMode::Single;
    settings.uri_path_normalization_mode = UriPathNormalizationMode::Disabled;
    settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
    let mut body = SignableBody::Bytes(b"");
    if presigned {
        settings.signature_location = SignatureLocation::QueryParams;
        settings.expires_in = Some(Duration::from_secs(3600));
        settings.payload_checksum_kind = PayloadChecksumKind::NoHeader;
        body = SignableBody::UnsignedPayload;
    }
    let identity: Identity = Credentials::new("default", "default", None, None, "bench").into();
    let params = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region("us-east-1")
        .name("s3")
        .time(time)
        .settings(settings)
        .build()
        .expect("signing parameters")
        .into();
    let headers = [("host", "127.0.0.1:8080")];
    let signable = SignableRequest::new(
        method,
        "http://127.0.0.1:8080/bench",
        headers.iter().copied(),
        body,
    )
    .expect("a signable request");
    let (instructions, _) = sign(signable, &params).expect("signed").into_parts();
    let mut request = Request::builder()
        .method(method)
        .uri("/bench")
        .header("host", "127.0.0.1:8080")
        .body(Full::new(Bytes::new()))
        .expect("a request");
    instructions.apply_to_request_http1x(&mut request);
    request
}

/// A copy of `request` (a request's body cannot be cloned, its head can).
fn copy(request: &Request<Full<Bytes>>) -> Request<Full<Bytes>> {
    let mut copy = Request::new(Full::new(Bytes::new()));
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.headers_mut() = request.headers().clone();
    copy
}

fn request_path(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime builds");
    let config = Config::from_yaml(CONFIG, "bench config").expect("the bench config is valid");
    let cloud = MockCloud::new(config).expect("a cloud");
    let now = SystemTime::UNIX_EPOCH
        + Duration::from_nanos(u64::try_from(cloud.epoch().as_nanosecond()).unwrap_or(0));
    let create = rt.block_on(cloud.handle(signed("PUT", now, false)));
    assert!(
        create.status().is_success(),
        "CreateBucket: {}",
        create.status()
    );
    let get = Request::get("/v1/accounts/default/buckets/b1")
        .header("authorization", "Bearer default")
        .body(Full::new(Bytes::new()))
        .expect("a request");
    let create_b1 = Request::post("/v1/accounts/default/buckets")
        .header("authorization", "Bearer default")
        .body(Full::new(Bytes::from_static(br#"{"name":"b1","spec":{}}"#)))
        .expect("a request");
    assert!(rt.block_on(cloud.handle(create_b1)).status().is_success());

    let cases = [
        ("head_bucket_presigned", signed("HEAD", now, true)),
        ("head_bucket_header_signed", signed("HEAD", now, false)),
        ("generic_get", get),
    ];
    let mut group = c.benchmark_group("request_path");
    group.throughput(Throughput::Elements(1));
    for (name, request) in &cases {
        let status = rt.block_on(cloud.handle(copy(request))).status();
        assert_eq!(status, 200, "{name} must succeed");
        group.bench_function(*name, |b| {
            b.iter_batched(
                || copy(request),
                |request| rt.block_on(cloud.handle(request)),
                BatchSize::SmallInput,
            );
        });
    }
    group.finish();
    assert_eq!(
        cloud.journal_stats().next_seq,
        cloud.summary().requests,
        "every call was journalled"
    );
}

criterion_group!(benches, request_path);
criterion_main!(benches);
