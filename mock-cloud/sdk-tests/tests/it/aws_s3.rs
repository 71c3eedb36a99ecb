//! S3 through the real aws-sdk-s3 over a loopback socket: every bucket operation round
//! trips, "not configured" answers carry S3's codes, and the journal names each call.

use aws_sdk_s3::error::ProvideErrorMetadata;
use aws_sdk_s3::types::{
    BucketVersioningStatus, CorsConfiguration, CorsRule, ExpirationStatus, LifecycleExpiration,
    LifecycleRule, LifecycleRuleFilter, ObjectOwnership, OwnershipControls, OwnershipControlsRule,
    PublicAccessBlockConfiguration, ServerSideEncryption, ServerSideEncryptionByDefault,
    ServerSideEncryptionConfiguration, ServerSideEncryptionRule, Tag, Tagging,
    VersioningConfiguration,
};
use mock_cloud::Config;

use crate::aws_support::{default_s3, serve};

pub(crate) fn code<E: ProvideErrorMetadata>(err: &E) -> String {
    err.code().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn every_bucket_operation_round_trips_through_the_sdk() {
    let served = serve(Config::default()).await;
    let client = default_s3(&served.url);
    let b = "round-trip";
    client.create_bucket().bucket(b).send().await.unwrap();
    client.head_bucket().bucket(b).send().await.unwrap();
    let listed = client.list_buckets().send().await.unwrap();
    assert_eq!(listed.buckets()[0].name(), Some(b));
    assert_eq!(listed.buckets()[0].bucket_region(), Some("us-east-1"));
    let location = client.get_bucket_location().bucket(b).send().await.unwrap();
    // us-east-1 is S3's empty `<LocationConstraint/>`.
    assert_eq!(
        location.location_constraint().map_or("", |c| c.as_str()),
        ""
    );

    // Not configured: S3's own errors.
    let e = client
        .get_bucket_tagging()
        .bucket(b)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "NoSuchTagSet");
    let e = client
        .get_bucket_policy()
        .bucket(b)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "NoSuchBucketPolicy");
    let e = client
        .get_bucket_lifecycle_configuration()
        .bucket(b)
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        code(&e.into_service_error()),
        "NoSuchLifecycleConfiguration"
    );
    let e = client.get_bucket_cors().bucket(b).send().await.unwrap_err();
    assert_eq!(code(&e.into_service_error()), "NoSuchCORSConfiguration");
    let e = client
        .get_bucket_website()
        .bucket(b)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code(&e.into_service_error()), "NoSuchWebsiteConfiguration");
    let e = client
        .get_bucket_replication()
        .bucket(b)
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        code(&e.into_service_error()),
        "ReplicationConfigurationNotFoundError"
    );
    let e = client
        .get_object_lock_configuration()
        .bucket(b)
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        code(&e.into_service_error()),
        "ObjectLockConfigurationNotFoundError"
    );
    // S3's defaults since 2023.
    let enc = client
        .get_bucket_encryption()
        .bucket(b)
        .send()
        .await
        .unwrap();
    let rule = &enc.server_side_encryption_configuration().unwrap().rules()[0];
    assert_eq!(
        rule.apply_server_side_encryption_by_default()
            .unwrap()
            .sse_algorithm(),
        &ServerSideEncryption::Aes256
    );
    let pab = client
        .get_public_access_block()
        .bucket(b)
        .send()
        .await
        .unwrap();
    assert_eq!(
        pab.public_access_block_configuration()
            .unwrap()
            .block_public_acls(),
        Some(true)
    );
    let own = client
        .get_bucket_ownership_controls()
        .bucket(b)
        .send()
        .await
        .unwrap();
    assert_eq!(
        own.ownership_controls().unwrap().rules()[0].object_ownership(),
        &ObjectOwnership::BucketOwnerEnforced
    );
    let versioning = client
        .get_bucket_versioning()
        .bucket(b)
        .send()
        .await
        .unwrap();
    assert_eq!(versioning.status(), None);
    let acl = client.get_bucket_acl().bucket(b).send().await.unwrap();
    assert_eq!(acl.grants().len(), 1);
    let logging = client.get_bucket_logging().bucket(b).send().await.unwrap();
    assert!(logging.logging_enabled().is_none());
    let accelerate = client
        .get_bucket_accelerate_configuration()
        .bucket(b)
        .send()
        .await
        .unwrap();
    assert!(accelerate.status().is_none());
    let payment = client
        .get_bucket_request_payment()
        .bucket(b)
        .send()
        .await
        .unwrap();
    assert_eq!(payment.payer().map(|p| p.as_str()), Some("BucketOwner"));

    // Put, get back, delete.
    let tag = Tag::builder().key("team").value("a&b").build().unwrap();
    let tagging = Tagging::builder().tag_set(tag).build().unwrap();
    client
        .put_bucket_tagging()
        .bucket(b)
        .tagging(tagging)
        .send()
        .await
        .unwrap();
    let got = client.get_bucket_tagging().bucket(b).send().await.unwrap();
    assert_eq!(
        (got.tag_set()[0].key(), got.tag_set()[0].value()),
        ("team", "a&b")
    );
    client
        .delete_bucket_tagging()
        .bucket(b)
        .send()
        .await
        .unwrap();
    assert!(client.get_bucket_tagging().bucket(b).send().await.is_err());

    let enabled = VersioningConfiguration::builder()
        .status(BucketVersioningStatus::Enabled)
        .build();
    client
        .put_bucket_versioning()
        .bucket(b)
        .versioning_configuration(enabled)
        .send()
        .await
        .unwrap();
    let versioning = client
        .get_bucket_versioning()
        .bucket(b)
        .send()
        .await
        .unwrap();
    assert_eq!(versioning.status(), Some(&BucketVersioningStatus::Enabled));

    let policy = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::round-trip/*"}]}"#;
    client
        .put_bucket_policy()
        .bucket(b)
        .policy(policy)
        .send()
        .await
        .unwrap();
    let got = client.get_bucket_policy().bucket(b).send().await.unwrap();
    assert_eq!(got.policy(), Some(policy));
    client
        .delete_bucket_policy()
        .bucket(b)
        .send()
        .await
        .unwrap();
    assert!(client.get_bucket_policy().bucket(b).send().await.is_err());

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
    client
        .put_bucket_encryption()
        .bucket(b)
        .server_side_encryption_configuration(enc)
        .send()
        .await
        .unwrap();
    let got = client
        .get_bucket_encryption()
        .bucket(b)
        .send()
        .await
        .unwrap();
    let default = got.server_side_encryption_configuration().unwrap().rules()[0]
        .apply_server_side_encryption_by_default()
        .unwrap();
    assert_eq!(
        (default.sse_algorithm(), default.kms_master_key_id()),
        (&ServerSideEncryption::AwsKms, Some("alias/x"))
    );
    client
        .delete_bucket_encryption()
        .bucket(b)
        .send()
        .await
        .unwrap();
    let got = client
        .get_bucket_encryption()
        .bucket(b)
        .send()
        .await
        .unwrap();
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
    client
        .put_bucket_lifecycle_configuration()
        .bucket(b)
        .lifecycle_configuration(lifecycle)
        .send()
        .await
        .unwrap();
    let got = client
        .get_bucket_lifecycle_configuration()
        .bucket(b)
        .send()
        .await
        .unwrap();
    assert_eq!(got.rules()[0].id(), Some("expire"));
    assert_eq!(got.rules()[0].expiration().unwrap().days(), Some(30));
    client
        .delete_bucket_lifecycle()
        .bucket(b)
        .send()
        .await
        .unwrap();
    assert!(
        client
            .get_bucket_lifecycle_configuration()
            .bucket(b)
            .send()
            .await
            .is_err()
    );

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
    client
        .put_bucket_cors()
        .bucket(b)
        .cors_configuration(cors)
        .send()
        .await
        .unwrap();
    let got = client.get_bucket_cors().bucket(b).send().await.unwrap();
    assert_eq!(got.cors_rules()[0].allowed_methods(), ["GET"]);
    client.delete_bucket_cors().bucket(b).send().await.unwrap();
    assert!(client.get_bucket_cors().bucket(b).send().await.is_err());

    let open = PublicAccessBlockConfiguration::builder()
        .block_public_acls(false)
        .build();
    client
        .put_public_access_block()
        .bucket(b)
        .public_access_block_configuration(open)
        .send()
        .await
        .unwrap();
    let got = client
        .get_public_access_block()
        .bucket(b)
        .send()
        .await
        .unwrap();
    assert_eq!(
        got.public_access_block_configuration()
            .unwrap()
            .block_public_acls(),
        Some(false)
    );
    client
        .delete_public_access_block()
        .bucket(b)
        .send()
        .await
        .unwrap();
    let e = client
        .get_public_access_block()
        .bucket(b)
        .send()
        .await
        .unwrap_err();
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
    client
        .put_bucket_ownership_controls()
        .bucket(b)
        .ownership_controls(writer)
        .send()
        .await
        .unwrap();
    let got = client
        .get_bucket_ownership_controls()
        .bucket(b)
        .send()
        .await
        .unwrap();
    assert_eq!(
        got.ownership_controls().unwrap().rules()[0].object_ownership(),
        &ObjectOwnership::ObjectWriter
    );
    client
        .delete_bucket_ownership_controls()
        .bucket(b)
        .send()
        .await
        .unwrap();
    let e = client
        .get_bucket_ownership_controls()
        .bucket(b)
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        code(&e.into_service_error()),
        "OwnershipControlsNotFoundError"
    );

    client.delete_bucket().bucket(b).send().await.unwrap();
    let e = client.head_bucket().bucket(b).send().await.unwrap_err();
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
