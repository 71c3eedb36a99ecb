//! S3 through the real aws-sdk-s3, what ownership decides: buckets already owned or not
//! empty, another account's bucket, and an object's ETag against a sent `Content-MD5`.

use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{BucketLocationConstraint, CreateBucketConfiguration};
use mock_cloud::Config;

use crate::aws_s3::code;
use crate::aws_support::{default_s3, keys, s3, s3_tagging, serve};

#[tokio::test]
async fn buckets_already_owned_and_not_empty_answer_as_s3_does() {
    let served = serve(Config::default()).await;
    let east = default_s3(&served.url);
    send!(east.create_bucket("legacy")).unwrap();
    // us-east-1: re-creating an owned bucket is a 200 (S3's legacy behaviour).
    send!(east.create_bucket("legacy")).unwrap();
    let west = s3(
        &served.url,
        keys("default", "default"),
        "eu-west-1",
        aws_smithy_types::retry::RetryConfig::disabled(),
    );
    let config = CreateBucketConfiguration::builder()
        .location_constraint(BucketLocationConstraint::EuWest1)
        .build();
    send!(
        west.create_bucket("regional")
            .create_bucket_configuration(config.clone())
    )
    .unwrap();
    let e = send!(
        west.create_bucket("regional")
            .create_bucket_configuration(config)
    )
    .unwrap_err();
    let e = e.into_service_error();
    assert!(e.is_bucket_already_owned_by_you(), "{e:?}");
    let location = send!(west.get_bucket_location("regional")).unwrap();
    assert_eq!(
        location.location_constraint(),
        Some(&BucketLocationConstraint::EuWest1)
    );
    let e = send!(west.create_bucket("no-constraint")).unwrap_err();
    assert_eq!(
        code(&e.into_service_error()),
        "IllegalLocationConstraintException"
    );

    send!(
        east.put_object("legacy")
            .key("dir/a.txt")
            .body(ByteStream::from_static(b"hello"))
    )
    .unwrap();
    let got = send!(east.get_object("legacy").key("dir/a.txt")).unwrap();
    assert_eq!(
        got.body.collect().await.unwrap().into_bytes().as_ref(),
        b"hello"
    );
    let e = send!(east.delete_bucket("legacy")).unwrap_err();
    assert_eq!(code(&e.into_service_error()), "BucketNotEmpty");
    send!(east.delete_object("legacy").key("dir/a.txt")).unwrap();
    send!(east.delete_bucket("legacy")).unwrap();
    let e = send!(east.create_bucket("Bad_Name")).unwrap_err();
    assert_eq!(code(&e.into_service_error()), "InvalidBucketName");
}

#[tokio::test]
async fn a_bucket_of_another_account_is_refused_and_its_name_taken() {
    let config = Config::from_yaml(
        "accounts:\n  - name: a\n    aws: {account_id: '111111111111', access_keys: [{id: AKIAA, secret: sa}]}\n  - name: b\n    aws: {account_id: '222222222222', access_keys: [{id: AKIAB, secret: sb}]}\n",
        "two.yaml",
    )
    .unwrap();
    let served = serve(config).await;
    let none = aws_smithy_types::retry::RetryConfig::disabled();
    let a = s3(&served.url, keys("AKIAA", "sa"), "us-east-1", none.clone());
    let b = s3(&served.url, keys("AKIAB", "sb"), "us-east-1", none);
    send!(a.create_bucket("shared-name")).unwrap();
    let e = send!(b.create_bucket("shared-name")).unwrap_err();
    assert!(e.into_service_error().is_bucket_already_exists());
    let e = send!(b.get_bucket_tagging("shared-name")).unwrap_err();
    assert_eq!(code(&e.into_service_error()), "AccessDenied");
    assert!(b.list_buckets().send().await.unwrap().buckets().is_empty());
    let accounts: Vec<String> = served
        .cloud
        .calls()
        .into_iter()
        .map(|c| c.account)
        .collect();
    assert_eq!(accounts, ["a", "b", "b", "b"]);
}

#[tokio::test]
async fn an_objects_etag_is_its_md5_and_a_content_md5_sent_is_checked() {
    let served = serve(Config::default()).await;
    let client = default_s3(&served.url);
    send!(client.create_bucket("digests")).unwrap();
    // MD5("hello world") = 5eb63bbbe01eeed093cb22bb8f5acdc3, XrY7u+Ae7tCTyyK7j1rNww== in
    // base64; the empty body's is d41d8cd98f00b204e9800998ecf8427e, 1B2M2Y8AsgTpgAmY7PhCfg==.
    let etag = "\"5eb63bbbe01eeed093cb22bb8f5acdc3\"";
    // "hello world" put as `k` with the Content-MD5 `md5`.
    let put_hello = async |md5: &str| {
        let body = ByteStream::from_static(b"hello world");
        send!(
            client
                .put_object("digests")
                .key("k")
                .body(body)
                .content_md5(md5)
        )
    };
    let put = put_hello("XrY7u+Ae7tCTyyK7j1rNww==").await.unwrap();
    assert_eq!(put.e_tag(), Some(etag));
    let head = send!(client.head_object("digests").key("k")).unwrap();
    assert_eq!(head.e_tag(), Some(etag));
    let got = send!(client.get_object("digests").key("k")).unwrap();
    assert_eq!(got.e_tag(), Some(etag));

    // Another MD5: BadDigest, naming the MD5 calculated (base64) and the one expected (hex).
    let e = put_hello("1B2M2Y8AsgTpgAmY7PhCfg==").await.unwrap_err();
    let raw = e.raw_response().unwrap().body().bytes().unwrap().to_vec();
    let raw = String::from_utf8(raw).unwrap();
    assert_eq!(code(&e.into_service_error()), "BadDigest");
    assert!(
        raw.contains("<Message>The Content-MD5 you specified did not match what we received.</Message><CalculatedDigest>XrY7u+Ae7tCTyyK7j1rNww==</CalculatedDigest><ExpectedDigest>d41d8cd98f00b204e9800998ecf8427e</ExpectedDigest>"),
        "{raw}"
    );
    // Not the base64 of 16 bytes: InvalidDigest.
    for bad in ["not base64!", "aGVsbG8="] {
        let e = send!(
            client
                .put_object("digests")
                .key("other")
                .body(ByteStream::from_static(b"x"))
                .content_md5(bad)
        )
        .unwrap_err();
        assert_eq!(code(&e.into_service_error()), "InvalidDigest", "{bad}");
    }
    // A subresource put is checked too.
    let tagging = s3_tagging("a", "b");
    let e = send!(
        client
            .put_bucket_tagging("digests")
            .tagging(tagging)
            .content_md5("1B2M2Y8AsgTpgAmY7PhCfg==")
    )
    .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "BadDigest");

    // Refused puts stored nothing, and every call is journalled.
    let e = send!(client.head_object("digests").key("other")).unwrap_err();
    assert!(e.into_service_error().is_not_found());
    let statuses: Vec<(String, u16)> = served
        .cloud
        .calls()
        .into_iter()
        .map(|c| (c.operation, c.status))
        .collect();
    assert_eq!(
        statuses[4..],
        [
            ("PutObject".to_owned(), 400),
            ("PutObject".to_owned(), 400),
            ("PutObject".to_owned(), 400),
            ("PutBucketTagging".to_owned(), 400),
            ("HeadObject".to_owned(), 404),
        ]
    );
}
