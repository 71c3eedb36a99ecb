//! The AWS wire below the SDKs, in process: S3's payload-hash rules, streaming uploads,
//! virtual hosts and presigned URLs; bad input answered with the service's own codes;
//! faults and shadow mode per service and operation; the metrics per operation.

use std::time::Duration;

use http_body_util::Full;
use mock_cloud::{
    ClassQuota, Config, ErrorRate, Faults, MockCloud, OperationFaults, Per, Quotas, Rate, Service,
    ServiceQuotas,
};

use crate::aws_support::{Payload, Signing, cloud_now, element, keys, signed, text};

fn cloud(config: Config) -> MockCloud {
    MockCloud::new(config).unwrap()
}

/// Sends a signed request and returns its status and body.
async fn send(cloud: &MockCloud, request: Signing<'_>) -> (u16, String) {
    let response = cloud
        .handle(request.sign(&keys("default", "default"), cloud_now(cloud)))
        .await;
    let status = response.status().as_u16();
    (status, text(response).await)
}

async fn create_bucket(cloud: &MockCloud, bucket: &str) {
    let uri = format!("/{bucket}");
    let (status, body) = send(cloud, Signing::new("PUT", &uri, "s3")).await;
    assert_eq!(status, 200, "{body}");
}

const TAGGING: &[u8] =
    b"<Tagging><TagSet><Tag><Key>team</Key><Value>a</Value></Tag></TagSet></Tagging>";
/// `Content-MD5` of [`TAGGING`] (checked by mock-cloud, as by S3).
const MD5: (&str, &str) = ("content-md5", "0/hDEQMhLM170c/rK1BEmQ==");

#[tokio::test(start_paused = true)]
async fn s3_takes_an_unsigned_payload_and_refuses_a_missing_or_wrong_content_hash() {
    let cloud = cloud(Config::default());
    create_bucket(&cloud, "bkt").await;
    let unsigned = Signing::new("PUT", "/bkt?tagging", "s3")
        .headers(&[MD5])
        .body(TAGGING)
        .payload(Payload::Unsigned);
    assert_eq!(send(&cloud, unsigned).await.0, 204);

    // Signed without x-amz-content-sha256, as the other services sign.
    let undeclared = Signing::new("GET", "/bkt?tagging", "s3").payload(Payload::NotS3);
    let (status, body) = send(&cloud, undeclared).await;
    assert_eq!(
        (status, element(&body, "Code")),
        (400, Some("InvalidRequest"))
    );
    assert!(body.contains("x-amz-content-sha256"), "{body}");

    // The declared hash is of another body than the one sent.
    let mut request = Signing::new("PUT", "/bkt?tagging", "s3")
        .headers(&[MD5])
        .body(TAGGING)
        .sign(&keys("default", "default"), cloud_now(&cloud));
    *request.body_mut() = Full::new(bytes::Bytes::from_static(
        b"<Tagging><TagSet></TagSet></Tagging>",
    ));
    let response = cloud.handle(request).await;
    assert_eq!(response.status(), 400);
    let body = text(response).await;
    assert_eq!(element(&body, "Code"), Some("XAmzContentSHA256Mismatch"));

    let not_a_hash = Signing::new("GET", "/bkt?tagging", "s3").payload(Payload::Marker("beef"));
    let (status, body) = send(&cloud, not_a_hash).await;
    assert_eq!(
        (status, element(&body, "Code")),
        (400, Some("InvalidArgument"))
    );
    let tags = send(&cloud, Signing::new("GET", "/bkt?tagging", "s3")).await;
    assert_eq!(
        element(&tags.1, "Key"),
        Some("team"),
        "the unsigned put stood"
    );
}

#[tokio::test(start_paused = true)]
async fn signed_streaming_uploads_are_refused_and_unsigned_chunks_with_a_trailer_are_decoded() {
    let cloud = cloud(Config::default());
    create_bucket(&cloud, "bkt").await;
    let body: &[u8] = b"5\r\nhello\r\n6\r\n world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n";
    let headers = [
        ("content-encoding", "aws-chunked"),
        ("x-amz-decoded-content-length", "11"),
        ("x-amz-trailer", "x-amz-checksum-crc32"),
    ];
    let signed_chunks = Signing::new("PUT", "/bkt/k", "s3")
        .headers(&headers)
        .body(body)
        .payload(Payload::Marker("STREAMING-AWS4-HMAC-SHA256-PAYLOAD"));
    let (status, answer) = send(&cloud, signed_chunks).await;
    assert_eq!(
        (status, element(&answer, "Code")),
        (501, Some("NotImplemented"))
    );
    assert_eq!(element(&answer, "Header"), Some("x-amz-content-sha256"));

    let unsigned_chunks = Signing::new("PUT", "/bkt/k", "s3")
        .headers(&headers)
        .body(body)
        .payload(Payload::Marker("STREAMING-UNSIGNED-PAYLOAD-TRAILER"));
    assert_eq!(send(&cloud, unsigned_chunks).await.0, 200);
    let (status, object) = send(&cloud, Signing::new("GET", "/bkt/k", "s3")).await;
    assert_eq!((status, object.as_str()), (200, "hello world"));

    let wrong: &[u8] = b"5\r\nhello\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n";
    let bad_trailer = Signing::new("PUT", "/bkt/k2", "s3")
        .headers(&[("x-amz-decoded-content-length", "5")])
        .body(wrong)
        .payload(Payload::Marker("STREAMING-UNSIGNED-PAYLOAD-TRAILER"));
    let (status, answer) = send(&cloud, bad_trailer).await;
    assert_eq!((status, element(&answer, "Code")), (400, Some("BadDigest")));
    let ops: Vec<String> = cloud.calls().into_iter().map(|c| c.operation).collect();
    assert_eq!(
        ops[1..],
        ["PutObject", "PutObject", "GetObject", "PutObject"]
    );
}

#[tokio::test(start_paused = true)]
async fn a_virtual_host_names_the_bucket_and_a_presigned_url_works_until_it_expires() {
    let cloud = cloud(Config::default());
    let create = Signing::new("PUT", "/", "s3").host("hosted.s3.mock.local:4566");
    assert_eq!(send(&cloud, create).await.0, 200);
    let tagging = Signing::new("GET", "/?tagging", "s3").host("hosted.s3.mock.local:4566");
    let (status, body) = send(&cloud, tagging).await;
    assert_eq!(
        (status, element(&body, "Code")),
        (404, Some("NoSuchTagSet"))
    );
    assert_eq!(element(&body, "BucketName"), Some("hosted"));

    let head = Signing::new("HEAD", "/hosted", "s3")
        .presigned(Duration::from_secs(60))
        .sign(&keys("default", "default"), cloud_now(&cloud));
    assert!(head.uri().query().unwrap().contains("X-Amz-Signature="));
    assert!(!head.headers().contains_key("authorization"));
    let again = head.clone();
    assert_eq!(cloud.handle(head).await.status(), 200);
    tokio::time::advance(Duration::from_secs(61)).await;
    let expired = cloud.handle(again).await;
    assert_eq!(expired.status(), 403, "a HEAD has no body, only the status");
    let calls = cloud.calls();
    assert_eq!(calls[0].name, "hosted");
    assert_eq!(
        (calls[2].operation.as_str(), calls[3].status),
        ("HeadBucket", 403)
    );
}

#[tokio::test(start_paused = true)]
async fn bad_input_gets_the_services_own_codes_and_never_a_500() {
    let cloud = cloud(Config::default());
    create_bucket(&cloud, "bkt").await;
    let broken = Signing::new("PUT", "/bkt?tagging", "s3")
        .headers(&[("content-md5", "qmV02LzFsUoS6NVSbqnHNA==")])
        .body(b"<Tagging><TagSet>");
    let (status, body) = send(&cloud, broken).await;
    assert_eq!(
        (status, element(&body, "Code")),
        (400, Some("MalformedXML"))
    );
    let no_md5 = Signing::new("PUT", "/bkt?tagging", "s3").body(TAGGING);
    let (status, body) = send(&cloud, no_md5).await;
    assert_eq!(
        (status, element(&body, "Code")),
        (400, Some("InvalidRequest"))
    );

    let huge = vec![b'x'; mock_cloud::MAX_BODY + 1];
    let (status, body) = send(&cloud, Signing::new("PUT", "/bkt/big", "s3").body(&huge)).await;
    assert_eq!(
        (status, element(&body, "Code")),
        (400, Some("EntityTooLarge"))
    );
    let (status, body) = send(&cloud, Signing::new("GET", "/bkt?list-type=2", "s3")).await;
    assert_eq!(
        (status, element(&body, "Code")),
        (501, Some("NotImplemented"))
    );

    let form = [("content-type", "application/x-www-form-urlencoded")];
    let post = |body: &'static [u8]| {
        Signing::new("POST", "/", "sts")
            .headers(&form)
            .body(body)
            .payload(Payload::NotS3)
    };
    let (status, body) = send(&cloud, post(b"Action=GetSessionToken&Version=2011-06-15")).await;
    assert_eq!(
        (status, element(&body, "Code")),
        (400, Some("InvalidAction"))
    );
    assert_eq!(element(&body, "Type"), Some("Sender"));
    assert!(
        body.starts_with("<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">")
    );
    let (status, body) = send(&cloud, post(b"Action=AssumeRole&Version=2011-06-15")).await;
    assert_eq!(
        (status, element(&body, "Code")),
        (400, Some("ValidationError"))
    );
    assert!(body.contains("'roleArn' failed to satisfy constraint: Member must not be null"));

    let unknown = Signing::new("POST", "/", "iam")
        .headers(&form)
        .body(b"Action=ListRoles")
        .payload(Payload::NotS3);
    assert_eq!(send(&cloud, unknown).await.0, 400);
    let statuses: Vec<u16> = cloud.calls().iter().map(|c| c.status).collect();
    assert!(statuses.iter().all(|s| *s != 500), "{statuses:?}");
}

#[tokio::test(start_paused = true)]
async fn an_sts_clock_out_of_skew_is_a_signature_that_expired() {
    let cloud = cloud(Config::default());
    let late = cloud_now(&cloud) + Duration::from_secs(20 * 60);
    let request = signed(
        "POST",
        "/",
        &[("content-type", "application/x-www-form-urlencoded")],
        b"Action=GetCallerIdentity&Version=2011-06-15",
        "sts",
        &keys("default", "default"),
        late,
        false,
    );
    let response = cloud.handle(request).await;
    assert_eq!(response.status(), 403);
    let body = text(response).await;
    assert_eq!(element(&body, "Code"), Some("SignatureDoesNotMatch"));
    assert!(
        element(&body, "Message")
            .unwrap()
            .starts_with("Signature expired: "),
        "{body}"
    );
}

#[tokio::test(start_paused = true)]
async fn operation_faults_from_the_config_and_at_run_time_answer_in_the_services_envelope() {
    let from_config = Faults::none().with_operation(
        Service::S3,
        "GetBucketTagging",
        OperationFaults::none()
            .with_errors(ErrorRate {
                probability: 1.0,
                status: 503,
            })
            .with_code("SlowDown"),
    );
    let cloud = cloud(Config::default().with_faults(from_config));
    create_bucket(&cloud, "bkt").await;
    let (status, body) = send(&cloud, Signing::new("GET", "/bkt?tagging", "s3")).await;
    assert_eq!((status, element(&body, "Code")), (503, Some("SlowDown")));
    assert_eq!(
        send(&cloud, Signing::new("GET", "/bkt?cors", "s3")).await.0,
        404,
        "other operations are untouched"
    );

    let at_run_time = r#"{"services": {"sts": {"*": {"errors": {"rate": 1.0, "status": 500}}}}}"#;
    let put = http::Request::put("/admin/v1/faults")
        .header("content-type", "application/json")
        .body(Full::new(bytes::Bytes::from_static(at_run_time.as_bytes())))
        .unwrap();
    assert_eq!(cloud.handle(put).await.status(), 200);
    let (status, body) = send(&cloud, Signing::new("GET", "/bkt?tagging", "s3")).await;
    assert_eq!(
        (status, element(&body, "Code")),
        (404, Some("NoSuchTagSet"))
    );
    let identity = Signing::new("POST", "/", "sts")
        .headers(&[("content-type", "application/x-www-form-urlencoded")])
        .body(b"Action=GetCallerIdentity&Version=2011-06-15")
        .payload(Payload::NotS3);
    let (status, body) = send(&cloud, identity).await;
    assert_eq!(
        (status, element(&body, "Code")),
        (500, Some("InternalFailure"))
    );
    assert_eq!(element(&body, "Type"), Some("Receiver"));

    let summary = cloud.summary();
    let faults: Vec<(&str, &str, u64)> = summary
        .operations
        .iter()
        .filter(|o| o.faults > 0)
        .map(|o| (o.service.as_str(), o.operation.as_str(), o.faults))
        .collect();
    assert_eq!(
        faults,
        [
            ("s3", "GetBucketTagging", 1),
            ("sts", "GetCallerIdentity", 1)
        ]
    );
    let metrics = cloud.metrics_text();
    assert!(
        metrics.contains(
            r#"mockcloud_operation_faults_total{service="sts",operation="GetCallerIdentity"} 1"#
        ),
        "{metrics}"
    );
}

/// STS allows one call a second in the `auth` class.
fn one_auth_call_a_second(shadow: bool) -> Config {
    let sts = ServiceQuotas::new()
        .with_class("auth", Some(ClassQuota::new(Rate::new(1, 1.0), Per::Class)));
    let mut config = Config::default().with_shadow(shadow);
    config.accounts[0].quotas = Quotas::unlimited().with_service(Service::Sts, Some(sts));
    config
}

fn caller_identity(cloud: &MockCloud) -> http::Request<Full<bytes::Bytes>> {
    Signing::new("POST", "/", "sts")
        .headers(&[("content-type", "application/x-www-form-urlencoded")])
        .body(b"Action=GetCallerIdentity&Version=2011-06-15")
        .payload(Payload::NotS3)
        .sign(&keys("default", "default"), cloud_now(cloud))
}

#[tokio::test(start_paused = true)]
async fn an_sts_throttle_is_a_400_throttling_and_shadow_mode_only_records_it() {
    let enforced = cloud(one_auth_call_a_second(false));
    assert_eq!(
        enforced.handle(caller_identity(&enforced)).await.status(),
        200
    );
    let throttled = enforced.handle(caller_identity(&enforced)).await;
    assert_eq!(throttled.status(), 400);
    assert!(throttled.headers().contains_key("x-amzn-requestid"));
    let body = text(throttled).await;
    assert_eq!(element(&body, "Code"), Some("Throttling"));
    assert_eq!(element(&body, "Message"), Some("Rate exceeded"));
    let metrics = enforced.metrics_text();
    assert!(
        metrics.contains(r#"mockcloud_operation_throttled_total{service="sts",operation="GetCallerIdentity",mode="enforced"} 1"#),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"mockcloud_requests_total{account="default",action="",service="sts",operation="GetCallerIdentity",code="400"} 1"#),
        "{metrics}"
    );

    let shadow = cloud(one_auth_call_a_second(true));
    for _ in 0..3 {
        assert_eq!(shadow.handle(caller_identity(&shadow)).await.status(), 200);
    }
    let calls = shadow.calls();
    assert_eq!(
        calls.iter().map(|c| c.shadow_throttled).collect::<Vec<_>>(),
        [false, true, true]
    );
    let summary = shadow.summary();
    assert_eq!(summary.violations[0].layer, "sts:class:auth");
    assert_eq!(summary.violations[0].shadow_throttled, 2);
}

#[tokio::test(start_paused = true)]
async fn a_signature_version_2_request_is_refused_as_s3_refuses_it() {
    let cloud = cloud(Config::default());
    let request =
        http::Request::head("/bkt?AWSAccessKeyId=default&Expires=1900000000&Signature=c2ln")
            .body(Full::new(bytes::Bytes::new()))
            .unwrap();
    let response = cloud.handle(request).await;
    assert_eq!(response.status(), 400);
    assert!(response.headers().contains_key("x-amz-request-id"));
    let request = http::Request::get("/")
        .header("authorization", "AWS default:c2lnbmF0dXJl")
        .header("date", "Tue, 24 Nov 2026 13:48:44 GMT")
        .body(Full::new(bytes::Bytes::new()))
        .unwrap();
    let response = cloud.handle(request).await;
    let body = text(response).await;
    assert_eq!(element(&body, "Code"), Some("InvalidRequest"));
    assert_eq!(
        element(&body, "Message"),
        Some(
            "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256."
        )
    );
    let calls = cloud.calls();
    assert_eq!(
        (calls[0].service.as_str(), calls[0].operation.as_str()),
        ("s3", "HeadBucket")
    );
}
