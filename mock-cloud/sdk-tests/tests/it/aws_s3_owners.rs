//! S3 through the real aws-sdk-s3, what ownership decides: buckets already owned or not
//! empty, another account's bucket, and an object's ETag against a sent `Content-MD5`.

use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{BucketLocationConstraint, CreateBucketConfiguration, Tag, Tagging};
use mock_cloud::Config;

use crate::aws_s3::code;
use crate::aws_support::{default_s3, keys, s3, serve};

#[tokio::test]
async fn buckets_already_owned_and_not_empty_answer_as_s3_does() {
    let served = serve(Config::default()).await;
    let east = default_s3(&served.url);
    east.create_bucket().bucket("legacy").send().await.unwrap();
    // us-east-1: re-creating an owned bucket is a 200 (S3's legacy behaviour).
    east.create_bucket().bucket("legacy").send().await.unwrap();
    let west = s3(
        &served.url,
        keys("default", "default"),
        "eu-west-1",
        aws_smithy_types::retry::RetryConfig::disabled(),
    );
    let config = CreateBucketConfiguration::builder()
        .location_constraint(BucketLocationConstraint::EuWest1)
        .build();
    west.create_bucket()
        .bucket("regional")
        .create_bucket_configuration(config.clone())
        .send()
        .await
        .unwrap();
    let e = west
        .create_bucket()
        .bucket("regional")
        .create_bucket_configuration(config)
        .send()
        .await
        .unwrap_err();
    let e = e.into_service_error();
    assert!(e.is_bucket_already_owned_by_you(), "{e:?}");
    let location = west
        .get_bucket_location()
        .bucket("regional")
        .send()
        .await
        .unwrap();
    assert_eq!(
        location.location_constraint(),
        Some(&BucketLocationConstraint::EuWest1)
    );
    let e = west
        .create_bucket()
        .bucket("no-constraint")
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        code(&e.into_service_error()),
        "IllegalLocationConstraintException"
    );

    east.put_object()
        .bucket("legacy")
        .key("dir/a.txt")
        .body(ByteStream::from_static(b"hello"))
        .send()
        .await
        .unwrap();
    let got = east
        .get_object()
        .bucket("legacy")
        .key("dir/a.txt")
        .send()
        .await
        .unwrap();
    assert_eq!(
        got.body.collect().await.unwrap().into_bytes().as_ref(),
        b"hello"
    );
    let e = east
        .delete_bucket()
        .bucket("legacy")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "BucketNotEmpty");
    east.delete_object()
        .bucket("legacy")
        .key("dir/a.txt")
        .send()
        .await
        .unwrap();
    east.delete_bucket().bucket("legacy").send().await.unwrap();
    let e = east
        .create_bucket()
        .bucket("Bad_Name")
        .send()
        .await
        .unwrap_err();
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
    a.create_bucket()
        .bucket("shared-name")
        .send()
        .await
        .unwrap();
    let e = b
        .create_bucket()
        .bucket("shared-name")
        .send()
        .await
        .unwrap_err();
    assert!(e.into_service_error().is_bucket_already_exists());
    let e = b
        .get_bucket_tagging()
        .bucket("shared-name")
        .send()
        .await
        .unwrap_err();
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
    client
        .create_bucket()
        .bucket("digests")
        .send()
        .await
        .unwrap();
    // MD5("hello world") = 5eb63bbbe01eeed093cb22bb8f5acdc3, XrY7u+Ae7tCTyyK7j1rNww== in
    // base64; the empty body's is d41d8cd98f00b204e9800998ecf8427e, 1B2M2Y8AsgTpgAmY7PhCfg==.
    let etag = "\"5eb63bbbe01eeed093cb22bb8f5acdc3\"";
    let put = client
        .put_object()
        .bucket("digests")
        .key("k")
        .body(ByteStream::from_static(b"hello world"))
        .content_md5("XrY7u+Ae7tCTyyK7j1rNww==")
        .send()
        .await
        .unwrap();
    assert_eq!(put.e_tag(), Some(etag));
    let head = client
        .head_object()
        .bucket("digests")
        .key("k")
        .send()
        .await
        .unwrap();
    assert_eq!(head.e_tag(), Some(etag));
    let got = client
        .get_object()
        .bucket("digests")
        .key("k")
        .send()
        .await
        .unwrap();
    assert_eq!(got.e_tag(), Some(etag));

    // Another MD5: BadDigest, naming the MD5 calculated (base64) and the one expected (hex).
    let e = client
        .put_object()
        .bucket("digests")
        .key("k")
        .body(ByteStream::from_static(b"hello world"))
        .content_md5("1B2M2Y8AsgTpgAmY7PhCfg==")
        .send()
        .await
        .unwrap_err();
    let raw = e.raw_response().unwrap().body().bytes().unwrap().to_vec();
    let raw = String::from_utf8(raw).unwrap();
    assert_eq!(code(&e.into_service_error()), "BadDigest");
    assert!(
        raw.contains("<Message>The Content-MD5 you specified did not match what we received.</Message><CalculatedDigest>XrY7u+Ae7tCTyyK7j1rNww==</CalculatedDigest><ExpectedDigest>d41d8cd98f00b204e9800998ecf8427e</ExpectedDigest>"),
        "{raw}"
    );
    // Not the base64 of 16 bytes: InvalidDigest.
    for bad in ["not base64!", "aGVsbG8="] {
        let e = client
            .put_object()
            .bucket("digests")
            .key("other")
            .body(ByteStream::from_static(b"x"))
            .content_md5(bad)
            .send()
            .await
            .unwrap_err();
        assert_eq!(code(&e.into_service_error()), "InvalidDigest", "{bad}");
    }
    // A subresource put is checked too.
    let tagging = Tagging::builder()
        .tag_set(Tag::builder().key("a").value("b").build().unwrap())
        .build()
        .unwrap();
    let e = client
        .put_bucket_tagging()
        .bucket("digests")
        .tagging(tagging)
        .content_md5("1B2M2Y8AsgTpgAmY7PhCfg==")
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "BadDigest");

    // Refused puts stored nothing, and every call is journalled.
    let e = client
        .head_object()
        .bucket("digests")
        .key("other")
        .send()
        .await
        .unwrap_err();
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
