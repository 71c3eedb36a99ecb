//! S3 through the real aws-sdk-s3 over a loopback socket: every bucket operation round
//! trips, "not configured" answers carry S3's codes, and the journal names each call.

use aws_sdk_s3::error::ProvideErrorMetadata;
use aws_sdk_s3::types::{
    BucketVersioningStatus, CorsConfiguration, CorsRule, ExpirationStatus, LifecycleExpiration,
    LifecycleRule, LifecycleRuleFilter, ObjectOwnership, OwnershipControls, OwnershipControlsRule,
    PublicAccessBlockConfiguration, ServerSideEncryption, ServerSideEncryptionByDefault,
    ServerSideEncryptionConfiguration, ServerSideEncryptionRule, VersioningConfiguration,
};
use mock_cloud::Config;

use crate::aws_support::{default_s3, s3_tagging, serve};

pub(crate) fn code<E: ProvideErrorMetadata>(err: &E) -> String {
    err.code().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn every_bucket_operation_round_trips_through_the_sdk() {
    let served = serve(Config::default()).await;
    let client = default_s3(&served.url);
    let b = "round-trip";
    send!(client.create_bucket(b)).unwrap();
    send!(client.head_bucket(b)).unwrap();
    let listed = client.list_buckets().send().await.unwrap();
    assert_eq!(listed.buckets()[0].name(), Some(b));
    assert_eq!(listed.buckets()[0].bucket_region(), Some("us-east-1"));
    let location = send!(client.get_bucket_location(b)).unwrap();
    // us-east-1 is S3's empty `<LocationConstraint/>`.
    assert_eq!(
        location.location_constraint().map_or("", |c| c.as_str()),
        ""
    );

    // Not configured: S3's own errors.
    let e = send!(client.get_bucket_tagging(b)).unwrap_err();
    assert_eq!(code(&e.into_service_error()), "NoSuchTagSet");
    let e = send!(client.get_bucket_policy(b)).unwrap_err();
    assert_eq!(code(&e.into_service_error()), "NoSuchBucketPolicy");
    let e = send!(client.get_bucket_lifecycle_configuration(b)).unwrap_err();
    assert_eq!(
        code(&e.into_service_error()),
        "NoSuchLifecycleConfiguration"
    );
    let e = send!(client.get_bucket_cors(b)).unwrap_err();
    assert_eq!(code(&e.into_service_error()), "NoSuchCORSConfiguration");
    let e = send!(client.get_bucket_website(b)).unwrap_err();
    assert_eq!(code(&e.into_service_error()), "NoSuchWebsiteConfiguration");
    let e = send!(client.get_bucket_replication(b)).unwrap_err();
    assert_eq!(
        code(&e.into_service_error()),
        "ReplicationConfigurationNotFoundError"
    );
    let e = send!(client.get_object_lock_configuration(b)).unwrap_err();
    assert_eq!(
        code(&e.into_service_error()),
        "ObjectLockConfigurationNotFoundError"
    );
    // S3's defaults since 2023.
    let enc = send!(client.get_bucket_encryption(b)).unwrap();
    let rule = &enc.server_side_encryption_configuration().unwrap().rules()[0];
    assert_eq!(
        rule.apply_server_side_encryption_by_default()
            .unwrap()
            .sse_algorithm(),
        &ServerSideEncryption::Aes256
    );
    let pab = send!(client.get_public_access_block(b)).unwrap();
    assert_eq!(
        pab.public_access_block_configuration()
            .unwrap()
            .block_public_acls(),
        Some(true)
    );
    let own = send!(client.get_bucket_ownership_controls(b)).unwrap();
    assert_eq!(
        own.ownership_controls().unwrap().rules()[0].object_ownership(),
        &ObjectOwnership::BucketOwnerEnforced
    );
    let versioning = send!(client.get_bucket_versioning(b)).unwrap();
    assert_eq!(versioning.status(), None);
    let acl = send!(client.get_bucket_acl(b)).unwrap();
    assert_eq!(acl.grants().len(), 1);
    let logging = send!(client.get_bucket_logging(b)).unwrap();
    assert!(logging.logging_enabled().is_none());
    let accelerate = send!(client.get_bucket_accelerate_configuration(b)).unwrap();
    assert!(accelerate.status().is_none());
    let payment = send!(client.get_bucket_request_payment(b)).unwrap();
    assert_eq!(payment.payer().map(|p| p.as_str()), Some("BucketOwner"));

    // Put, get back, delete.
    let tagging = s3_tagging("team", "a&b");
    send!(client.put_bucket_tagging(b).tagging(tagging)).unwrap();
    let got = send!(client.get_bucket_tagging(b)).unwrap();
    assert_eq!(
        (got.tag_set()[0].key(), got.tag_set()[0].value()),
        ("team", "a&b")
    );
    send!(client.delete_bucket_tagging(b)).unwrap();
    assert!(send!(client.get_bucket_tagging(b)).is_err());

    let enabled = VersioningConfiguration::builder()
        .status(BucketVersioningStatus::Enabled)
        .build();
    send!(
        client
            .put_bucket_versioning(b)
            .versioning_configuration(enabled)
    )
    .unwrap();
    let versioning = send!(client.get_bucket_versioning(b)).unwrap();
    assert_eq!(versioning.status(), Some(&BucketVersioningStatus::Enabled));

    let policy = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::round-trip/*"}]}"#;
    send!(client.put_bucket_policy(b).policy(policy)).unwrap();
    let got = send!(client.get_bucket_policy(b)).unwrap();
    assert_eq!(got.policy(), Some(policy));
    send!(client.delete_bucket_policy(b)).unwrap();
    assert!(send!(client.get_bucket_policy(b)).is_err());

    let kms = ServerSideEncryptionByDefault::builder()
        .sse_algorithm(ServerSideEncryption::AwsKms)
        .kms_master_key_id("alias/x")
        .build()
        .unwrap();
    let enc = ServerSideEncryptionConfiguration::builder()
        .rules(
            ServerSideEncryptionRule::builder()
                .apply_server_side_encryption_by_default(kms)
                .build(),
        )
        .build()
        .unwrap();
    send!(
        client
            .put_bucket_encryption(b)
            .server_side_encryption_configuration(enc)
    )
    .unwrap();
    let got = send!(client.get_bucket_encryption(b)).unwrap();
    let default = got.server_side_encryption_configuration().unwrap().rules()[0]
        .apply_server_side_encryption_by_default()
        .unwrap();
    assert_eq!(
        (default.sse_algorithm(), default.kms_master_key_id()),
        (&ServerSideEncryption::AwsKms, Some("alias/x"))
    );
    send!(client.delete_bucket_encryption(b)).unwrap();
    let got = send!(client.get_bucket_encryption(b)).unwrap();
    let default = got.server_side_encryption_configuration().unwrap().rules()[0]
        .apply_server_side_encryption_by_default()
        .unwrap()
        .sse_algorithm()
        .clone();
    assert_eq!(
        default,
        ServerSideEncryption::Aes256,
        "a delete restores SSE-S3"
    );

    let rule = LifecycleRule::builder()
        .id("expire")
        .status(ExpirationStatus::Enabled)
        .filter(LifecycleRuleFilter::builder().prefix("logs/").build())
        .expiration(LifecycleExpiration::builder().days(30).build())
        .build()
        .unwrap();
    let lifecycle = aws_sdk_s3::types::BucketLifecycleConfiguration::builder()
        .rules(rule)
        .build()
        .unwrap();
    send!(
        client
            .put_bucket_lifecycle_configuration(b)
            .lifecycle_configuration(lifecycle)
    )
    .unwrap();
    let got = send!(client.get_bucket_lifecycle_configuration(b)).unwrap();
    assert_eq!(got.rules()[0].id(), Some("expire"));
    assert_eq!(got.rules()[0].expiration().unwrap().days(), Some(30));
    send!(client.delete_bucket_lifecycle(b)).unwrap();
    assert!(send!(client.get_bucket_lifecycle_configuration(b)).is_err());

    let cors = CorsConfiguration::builder()
        .cors_rules(
            CorsRule::builder()
                .allowed_methods("GET")
                .allowed_origins("*")
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    send!(client.put_bucket_cors(b).cors_configuration(cors)).unwrap();
    let got = send!(client.get_bucket_cors(b)).unwrap();
    assert_eq!(got.cors_rules()[0].allowed_methods(), ["GET"]);
    send!(client.delete_bucket_cors(b)).unwrap();
    assert!(send!(client.get_bucket_cors(b)).is_err());

    let open = PublicAccessBlockConfiguration::builder()
        .block_public_acls(false)
        .build();
    send!(
        client
            .put_public_access_block(b)
            .public_access_block_configuration(open)
    )
    .unwrap();
    let got = send!(client.get_public_access_block(b)).unwrap();
    assert_eq!(
        got.public_access_block_configuration()
            .unwrap()
            .block_public_acls(),
        Some(false)
    );
    send!(client.delete_public_access_block(b)).unwrap();
    let e = send!(client.get_public_access_block(b)).unwrap_err();
    assert_eq!(
        code(&e.into_service_error()),
        "NoSuchPublicAccessBlockConfiguration"
    );

    let writer = OwnershipControls::builder()
        .rules(
            OwnershipControlsRule::builder()
                .object_ownership(ObjectOwnership::ObjectWriter)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    send!(
        client
            .put_bucket_ownership_controls(b)
            .ownership_controls(writer)
    )
    .unwrap();
    let got = send!(client.get_bucket_ownership_controls(b)).unwrap();
    assert_eq!(
        got.ownership_controls().unwrap().rules()[0].object_ownership(),
        &ObjectOwnership::ObjectWriter
    );
    send!(client.delete_bucket_ownership_controls(b)).unwrap();
    let e = send!(client.get_bucket_ownership_controls(b)).unwrap_err();
    assert_eq!(
        code(&e.into_service_error()),
        "OwnershipControlsNotFoundError"
    );

    send!(client.delete_bucket(b)).unwrap();
    let e = send!(client.head_bucket(b)).unwrap_err();
    assert!(e.into_service_error().is_not_found());

    // Every call is journalled with its service and operation.
    let calls = served.cloud.calls();
    assert!(
        calls
            .iter()
            .all(|c| c.service == "s3" && !c.operation.is_empty()),
        "{calls:#?}"
    );
    assert!(calls.iter().all(|c| c.account == "default"));
    let ops: std::collections::BTreeSet<&str> =
        calls.iter().map(|c| c.operation.as_str()).collect();
    assert_eq!(ops.len(), 35, "{ops:?}");
    assert_eq!(calls[0].operation, "CreateBucket");
    assert_eq!(calls[0].name, b);
}
