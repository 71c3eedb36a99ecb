//! The S3 `Bucket` external client, shaped like provider-upjet-aws's `Bucket` on Terraform's
//! `aws_s3_bucket`: Observe is Terraform's read (HeadBucket, then 14 Get calls), Create,
//! Update and Delete make only the calls the change needs.
//!
//! | path | S3 calls |
//! |---|---|
//! | observe, bucket absent | 1: HeadBucket (404) |
//! | observe, bucket present | 15: HeadBucket, GetBucketPolicy, GetBucketAcl, GetBucketCors, GetBucketWebsite, GetBucketVersioning, GetBucketAccelerateConfiguration, GetBucketRequestPayment, GetBucketLogging, GetBucketLifecycleConfiguration, GetBucketReplication, GetBucketEncryption, GetObjectLockConfiguration, GetBucketLocation, GetBucketTagging |
//! | create | 1 CreateBucket + 1 PutBucketTagging if tags + 1 PutBucketVersioning if versioning + 1 PutBucketEncryption if serverSideEncryption |
//! | update | 1 per differing part: PutBucketTagging (DeleteBucketTagging when the tags become empty), PutBucketVersioning, PutBucketEncryption |
//! | delete | 1: DeleteBucket |
//!
//! A subresource S3 reports as not configured (`NoSuchTagSet`, `NoSuchBucketPolicy`, …) is
//! read as absent, as Terraform does. Any other error fails the Observe.

use std::collections::BTreeMap;

use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_s3::types::{
    BucketLocationConstraint, BucketVersioningStatus, CreateBucketConfiguration,
    ServerSideEncryption, ServerSideEncryptionByDefault, ServerSideEncryptionConfiguration,
    ServerSideEncryptionRule, Tag, Tagging, VersioningConfiguration,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::AwsError;

/// `spec.forProvider` of a Bucket.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BucketParameters {
    /// The region (`CreateBucketConfiguration.LocationConstraint`; none for us-east-1).
    pub region: String,
    /// Tags (`PutBucketTagging`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    /// Versioning (`PutBucketVersioning`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versioning: Option<Versioning>,
    /// Default encryption (`PutBucketEncryption`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_side_encryption: Option<Encryption>,
}

/// `forProvider.versioning`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Versioning {
    /// `Enabled` when true, `Suspended` when false.
    pub enabled: bool,
}

/// `forProvider.serverSideEncryption`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Encryption {
    /// `AES256`, `aws:kms` or `aws:kms:dsse`.
    pub sse_algorithm: String,
    /// The KMS key, for `aws:kms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kms_master_key_id: Option<String>,
}

/// `status.atProvider` of a Bucket: what the read found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BucketObservation {
    /// The bucket's name.
    pub id: String,
    /// `arn:aws:s3:::NAME`.
    pub arn: String,
    /// GetBucketLocation's answer (`us-east-1` for an empty constraint).
    pub region: String,
    /// The tags (GetBucketTagging; empty for `NoSuchTagSet`).
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Versioning status: `Enabled`, `Suspended`, or none if never set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versioning: Option<String>,
    /// The default encryption algorithm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sse_algorithm: Option<String>,
    /// The KMS key of the default encryption.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kms_master_key_id: Option<String>,
    /// The bucket policy, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// The owner's canonical ID (GetBucketAcl).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_id: Option<String>,
    /// Whether object lock is configured.
    pub object_lock_enabled: bool,
    /// Request payer (`BucketOwner` or `Requester`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_payer: Option<String>,
    /// Transfer acceleration status, if set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceleration_status: Option<String>,
    /// Subresources that are configured, by Terraform attribute name (cors_rule, website,
    /// logging, lifecycle_rule, replication_configuration).
    #[serde(default)]
    pub configured: Vec<String>,
}

impl BucketObservation {
    /// Whether the bucket matches `spec` in everything `spec` sets.
    #[must_use]
    pub fn up_to_date(&self, spec: &BucketParameters) -> bool {
        self.diff(spec) == Diff::default()
    }

    fn diff(&self, spec: &BucketParameters) -> Diff {
        Diff {
            tags: self.tags != spec.tags,
            versioning: spec.versioning.as_ref().is_some_and(|v| {
                let want = if v.enabled { "Enabled" } else { "Suspended" };
                // A bucket never versioned is as good as suspended.
                let have = self.versioning.as_deref().unwrap_or("Suspended");
                have != want
            }),
            encryption: spec.server_side_encryption.as_ref().is_some_and(|e| {
                self.sse_algorithm.as_deref() != Some(e.sse_algorithm.as_str())
                    || (e.kms_master_key_id.is_some()
                        && self.kms_master_key_id != e.kms_master_key_id)
            }),
        }
    }
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Diff {
    tags: bool,
    versioning: bool,
    encryption: bool,
}

fn s3_error<E, R>(operation: &'static str, bucket: &str, e: SdkError<E, R>) -> AwsError
where
    E: std::error::Error + ProvideErrorMetadata + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    AwsError::sdk("S3", operation, e).on(format!("bucket {bucket:?}"))
}

/// The codes S3 answers for a subresource that is not configured: absent, not an error.
const NOT_CONFIGURED: [&str; 9] = [
    "NoSuchBucketPolicy",
    "NoSuchCORSConfiguration",
    "NoSuchWebsiteConfiguration",
    "NoSuchLifecycleConfiguration",
    "ReplicationConfigurationNotFoundError",
    "ServerSideEncryptionConfigurationNotFoundError",
    "ObjectLockConfigurationNotFoundError",
    "NoSuchTagSet",
    "NoSuchPublicAccessBlockConfiguration",
];

/// `Ok(None)` for "not configured", the answer otherwise.
fn optional<T, E, R>(
    operation: &'static str,
    bucket: &str,
    r: Result<T, SdkError<E, R>>,
) -> Result<Option<T>, AwsError>
where
    E: std::error::Error + ProvideErrorMetadata + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.code().is_some_and(|c| NOT_CONFIGURED.contains(&c)) => Ok(None),
        Err(e) => Err(s3_error(operation, bucket, e)),
    }
}

/// Observe: Terraform's read of `aws_s3_bucket`. `None` when HeadBucket says 404.
///
/// # Errors
/// Any S3 error but "not found" and "not configured".
pub async fn observe(
    s3: &aws_sdk_s3::Client,
    name: &str,
) -> Result<Option<BucketObservation>, AwsError> {
    match s3.head_bucket().bucket(name).send().await {
        Ok(_) => {}
        Err(e) if e.as_service_error().is_some_and(|s| s.is_not_found()) => return Ok(None),
        Err(e) => return Err(s3_error("HeadBucket", name, e)),
    }
    let mut o = BucketObservation {
        id: name.to_owned(),
        arn: format!("arn:aws:s3:::{name}"),
        ..BucketObservation::default()
    };
    let policy = optional(
        "GetBucketPolicy",
        name,
        s3.get_bucket_policy().bucket(name).send().await,
    )?;
    o.policy = policy.and_then(|p| p.policy);
    let acl = optional(
        "GetBucketAcl",
        name,
        s3.get_bucket_acl().bucket(name).send().await,
    )?;
    o.owner_id = acl.and_then(|a| a.owner.and_then(|o| o.id));
    let cors = optional(
        "GetBucketCors",
        name,
        s3.get_bucket_cors().bucket(name).send().await,
    )?;
    configured(&mut o, "cors_rule", cors.is_some());
    let website = optional(
        "GetBucketWebsite",
        name,
        s3.get_bucket_website().bucket(name).send().await,
    )?;
    configured(&mut o, "website", website.is_some());
    let versioning = optional(
        "GetBucketVersioning",
        name,
        s3.get_bucket_versioning().bucket(name).send().await,
    )?;
    o.versioning = versioning
        .and_then(|v| v.status)
        .map(|s| s.as_str().to_owned());
    let accel = optional(
        "GetBucketAccelerateConfiguration",
        name,
        s3.get_bucket_accelerate_configuration()
            .bucket(name)
            .send()
            .await,
    )?;
    o.acceleration_status = accel.and_then(|a| a.status).map(|s| s.as_str().to_owned());
    let payment = optional(
        "GetBucketRequestPayment",
        name,
        s3.get_bucket_request_payment().bucket(name).send().await,
    )?;
    o.request_payer = payment.and_then(|p| p.payer).map(|p| p.as_str().to_owned());
    let logging = optional(
        "GetBucketLogging",
        name,
        s3.get_bucket_logging().bucket(name).send().await,
    )?;
    configured(
        &mut o,
        "logging",
        logging.is_some_and(|l| l.logging_enabled.is_some()),
    );
    let lifecycle = optional(
        "GetBucketLifecycleConfiguration",
        name,
        s3.get_bucket_lifecycle_configuration()
            .bucket(name)
            .send()
            .await,
    )?;
    configured(&mut o, "lifecycle_rule", lifecycle.is_some());
    let replication = optional(
        "GetBucketReplication",
        name,
        s3.get_bucket_replication().bucket(name).send().await,
    )?;
    configured(&mut o, "replication_configuration", replication.is_some());
    let encryption = optional(
        "GetBucketEncryption",
        name,
        s3.get_bucket_encryption().bucket(name).send().await,
    )?;
    if let Some(d) = encryption
        .and_then(|e| e.server_side_encryption_configuration)
        .and_then(|c| c.rules.into_iter().next())
        .and_then(|r| r.apply_server_side_encryption_by_default)
    {
        o.sse_algorithm = Some(d.sse_algorithm.as_str().to_owned());
        o.kms_master_key_id = d.kms_master_key_id;
    }
    let lock = optional(
        "GetObjectLockConfiguration",
        name,
        s3.get_object_lock_configuration().bucket(name).send().await,
    )?;
    o.object_lock_enabled = lock
        .and_then(|l| l.object_lock_configuration)
        .is_some_and(|c| c.object_lock_enabled.is_some());
    let location = optional(
        "GetBucketLocation",
        name,
        s3.get_bucket_location().bucket(name).send().await,
    )?;
    o.region = location
        .and_then(|l| l.location_constraint)
        .map(|c| c.as_str().to_owned())
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "us-east-1".to_owned());
    let tagging = optional(
        "GetBucketTagging",
        name,
        s3.get_bucket_tagging().bucket(name).send().await,
    )?;
    o.tags = tagging
        .map(|t| t.tag_set.into_iter().map(|t| (t.key, t.value)).collect())
        .unwrap_or_default();
    Ok(Some(o))
}

fn configured(o: &mut BucketObservation, what: &str, yes: bool) {
    if yes {
        o.configured.push(what.to_owned());
    }
}

/// Create: CreateBucket in `spec.region`, then the parts `spec` sets.
///
/// # Errors
/// The first S3 error.
pub async fn create(
    s3: &aws_sdk_s3::Client,
    name: &str,
    spec: &BucketParameters,
) -> Result<(), AwsError> {
    let mut req = s3.create_bucket().bucket(name);
    if spec.region != "us-east-1" {
        req = req.create_bucket_configuration(
            CreateBucketConfiguration::builder()
                .location_constraint(BucketLocationConstraint::from(spec.region.as_str()))
                .build(),
        );
    }
    req.send()
        .await
        .map_err(|e| s3_error("CreateBucket", name, e))?;
    apply(
        s3,
        name,
        spec,
        &Diff {
            tags: !spec.tags.is_empty(),
            versioning: spec.versioning.is_some(),
            encryption: spec.server_side_encryption.is_some(),
        },
    )
    .await
}

/// Update: one call for each part that differs from `observed`.
///
/// # Errors
/// The first S3 error.
pub async fn update(
    s3: &aws_sdk_s3::Client,
    name: &str,
    spec: &BucketParameters,
    observed: &BucketObservation,
) -> Result<(), AwsError> {
    apply(s3, name, spec, &observed.diff(spec)).await
}

async fn apply(
    s3: &aws_sdk_s3::Client,
    name: &str,
    spec: &BucketParameters,
    diff: &Diff,
) -> Result<(), AwsError> {
    if diff.tags {
        if spec.tags.is_empty() {
            s3.delete_bucket_tagging()
                .bucket(name)
                .send()
                .await
                .map_err(|e| s3_error("DeleteBucketTagging", name, e))?;
        } else {
            let tags = spec
                .tags
                .iter()
                .map(|(k, v)| Tag::builder().key(k).value(v).build())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| build_error("PutBucketTagging", name, e))?;
            let tagging = Tagging::builder()
                .set_tag_set(Some(tags))
                .build()
                .map_err(|e| build_error("PutBucketTagging", name, e))?;
            s3.put_bucket_tagging()
                .bucket(name)
                .tagging(tagging)
                .send()
                .await
                .map_err(|e| s3_error("PutBucketTagging", name, e))?;
        }
    }
    if let (true, Some(v)) = (diff.versioning, &spec.versioning) {
        let status = if v.enabled {
            BucketVersioningStatus::Enabled
        } else {
            BucketVersioningStatus::Suspended
        };
        s3.put_bucket_versioning()
            .bucket(name)
            .versioning_configuration(VersioningConfiguration::builder().status(status).build())
            .send()
            .await
            .map_err(|e| s3_error("PutBucketVersioning", name, e))?;
    }
    if let (true, Some(enc)) = (diff.encryption, &spec.server_side_encryption) {
        let default = ServerSideEncryptionByDefault::builder()
            .sse_algorithm(ServerSideEncryption::from(enc.sse_algorithm.as_str()))
            .set_kms_master_key_id(enc.kms_master_key_id.clone())
            .build()
            .map_err(|e| build_error("PutBucketEncryption", name, e))?;
        let config = ServerSideEncryptionConfiguration::builder()
            .rules(
                ServerSideEncryptionRule::builder()
                    .apply_server_side_encryption_by_default(default)
                    .build(),
            )
            .build()
            .map_err(|e| build_error("PutBucketEncryption", name, e))?;
        s3.put_bucket_encryption()
            .bucket(name)
            .server_side_encryption_configuration(config)
            .send()
            .await
            .map_err(|e| s3_error("PutBucketEncryption", name, e))?;
    }
    Ok(())
}

fn build_error(
    operation: &'static str,
    bucket: &str,
    e: aws_sdk_s3::error::BuildError,
) -> AwsError {
    AwsError::other("S3", operation, e).on(format!("bucket {bucket:?}"))
}

/// Delete: DeleteBucket. A bucket already gone is success.
///
/// # Errors
/// Any other S3 error (`BucketNotEmpty` included).
pub async fn delete(s3: &aws_sdk_s3::Client, name: &str) -> Result<(), AwsError> {
    match s3.delete_bucket().bucket(name).send().await {
        Ok(_) => Ok(()),
        Err(e) if e.code() == Some("NoSuchBucket") => Ok(()),
        Err(e) => Err(s3_error("DeleteBucket", name, e)),
    }
}
