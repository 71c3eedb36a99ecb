//! Bucket subresources: Get/Put/Delete of tagging, versioning (Get/Put: S3 has no delete),
//! policy, encryption, lifecycle, CORS, public access block and ownership controls; Get of
//! ACL, logging, website, acceleration, request payment, replication and object lock.

use std::sync::Arc;

use http::{HeaderValue, Response, StatusCode};

use super::super::accounts::Principal;
use super::super::envelope::AwsError;
use super::super::xml::Element;
use super::buckets::{canonical_id, owned, owned_mut};
use super::store::{Bucket, Store, default_encryption};
use super::{Ctx, NAMESPACE, empty, schema};
use crate::http::respond::ResponseBody;
use crate::service::S3Operation;

/// The header S3 answers lifecycle gets and puts with.
const TRANSITION_MINIMUM: (&str, &str) = (
    "x-amz-transition-default-minimum-object-size",
    "all_storage_classes_128K",
);

/// S3's 404 for a get (`op`) of a subresource the bucket `bucket` has never had
/// configured, with that subresource's code and message.
fn not_configured(op: S3Operation, bucket: &str) -> AwsError {
    use S3Operation as Op;
    let (code, message) = match op {
        Op::GetBucketTagging => ("NoSuchTagSet", "The TagSet does not exist"),
        Op::GetBucketPolicy => ("NoSuchBucketPolicy", "The bucket policy does not exist"),
        Op::GetBucketEncryption => (
            "ServerSideEncryptionConfigurationNotFoundError",
            "The server side encryption configuration was not found",
        ),
        Op::GetBucketLifecycleConfiguration => (
            "NoSuchLifecycleConfiguration",
            "The lifecycle configuration does not exist",
        ),
        Op::GetBucketCors => (
            "NoSuchCORSConfiguration",
            "The CORS configuration does not exist",
        ),
        Op::GetPublicAccessBlock => (
            "NoSuchPublicAccessBlockConfiguration",
            "The public access block configuration was not found",
        ),
        Op::GetBucketOwnershipControls => (
            "OwnershipControlsNotFoundError",
            "The bucket ownership controls were not found",
        ),
        Op::GetBucketWebsite => (
            "NoSuchWebsiteConfiguration",
            "The specified bucket does not have a website configuration",
        ),
        Op::GetBucketReplication => (
            "ReplicationConfigurationNotFoundError",
            "The replication configuration was not found",
        ),
        Op::GetObjectLockConfiguration => (
            "ObjectLockConfigurationNotFoundError",
            "Object Lock configuration does not exist for this bucket",
        ),
        _ => unreachable!("{op:?} reads no subresource"),
    };
    AwsError::new(StatusCode::NOT_FOUND, code, message).with_field("BucketName", bucket)
}

/// Puts S3 requires a checksum for need `Content-MD5` or an `x-amz-checksum-*` header.
fn require_checksum(ctx: &Ctx<'_>) -> Result<(), AwsError> {
    let headers = ctx.request.headers;
    let has = headers.contains_key("content-md5")
        || headers.keys().any(|k| {
            k.as_str().starts_with("x-amz-checksum-") && k.as_str() != "x-amz-checksum-type"
        });
    if has {
        Ok(())
    } else {
        Err(AwsError::new(
            StatusCode::BAD_REQUEST,
            "InvalidRequest",
            "Missing required header for this request: Content-MD5",
        ))
    }
}

fn document(ctx: &Ctx<'_>, element: &Element) -> Response<ResponseBody> {
    super::xml(ctx, StatusCode::OK, element.document(NAMESPACE))
}

fn empty_document(ctx: &Ctx<'_>, root: &str) -> Response<ResponseBody> {
    super::xml(
        ctx,
        StatusCode::OK,
        format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<{root} xmlns=\"{NAMESPACE}\"/>"),
    )
}

/// A configuration that is either set or answers `missing`.
fn get(
    ctx: &Ctx<'_>,
    value: Option<&Element>,
    missing: AwsError,
) -> Result<Response<ResponseBody>, AwsError> {
    value.map(|e| document(ctx, e)).ok_or(missing)
}

pub(crate) fn handle(
    ctx: &Ctx<'_>,
    store: &mut Store,
    caller: &Arc<Principal>,
    op: S3Operation,
    name: &str,
) -> Result<Response<ResponseBody>, AwsError> {
    use S3Operation as Op;
    if matches!(
        op,
        Op::PutBucketTagging
            | Op::PutBucketVersioning
            | Op::PutBucketPolicy
            | Op::PutBucketEncryption
            | Op::PutBucketLifecycleConfiguration
            | Op::PutBucketCors
            | Op::PutPublicAccessBlock
            | Op::PutBucketOwnershipControls
    ) {
        owned(store, caller, name)?;
        require_checksum(ctx)?;
        return put(ctx, owned_mut(store, caller, name)?, op);
    }
    if matches!(
        op,
        Op::DeleteBucketTagging
            | Op::DeleteBucketPolicy
            | Op::DeleteBucketEncryption
            | Op::DeleteBucketLifecycle
            | Op::DeleteBucketCors
            | Op::DeletePublicAccessBlock
            | Op::DeleteBucketOwnershipControls
    ) {
        let bucket = owned_mut(store, caller, name)?;
        match op {
            Op::DeleteBucketTagging => bucket.tagging = None,
            Op::DeleteBucketPolicy => bucket.policy = None,
            Op::DeleteBucketEncryption => bucket.encryption = Some(default_encryption()),
            Op::DeleteBucketLifecycle => bucket.lifecycle = None,
            Op::DeleteBucketCors => bucket.cors = None,
            Op::DeletePublicAccessBlock => bucket.public_access_block = None,
            _ => bucket.ownership = None,
        }
        return Ok(empty(ctx, StatusCode::NO_CONTENT));
    }
    let bucket = owned(store, caller, name)?;
    match op {
        Op::GetBucketTagging => match (&ctx.drift, &bucket.tagging) {
            (Some(field), tagging) => {
                let empty = super::super::xml::Element {
                    name: "Tagging".to_owned(),
                    text: String::new(),
                    children: Vec::new(),
                };
                let tagging = tagging.as_ref().unwrap_or(&empty);
                let drifted =
                    super::super::resource_faults::drift_tagging(tagging, field.as_deref());
                Ok(document(ctx, &drifted))
            }
            (None, tagging) => get(ctx, tagging.as_ref(), not_configured(op, name)),
        },
        Op::GetBucketVersioning => Ok(match &bucket.versioning {
            Some(v) => document(ctx, v),
            None => empty_document(ctx, "VersioningConfiguration"),
        }),
        Op::GetBucketPolicy => match &bucket.policy {
            Some(policy) => Ok(super::super::envelope::respond(
                &ctx.reply,
                StatusCode::OK,
                "application/json",
                policy.clone(),
            )),
            None => Err(not_configured(op, name)),
        },
        Op::GetBucketEncryption => get(ctx, bucket.encryption.as_ref(), not_configured(op, name)),
        Op::GetBucketLifecycleConfiguration => {
            let mut response = get(ctx, bucket.lifecycle.as_ref(), not_configured(op, name))?;
            response.headers_mut().insert(
                TRANSITION_MINIMUM.0,
                HeaderValue::from_static(TRANSITION_MINIMUM.1),
            );
            Ok(response)
        }
        Op::GetBucketCors => get(ctx, bucket.cors.as_ref(), not_configured(op, name)),
        Op::GetPublicAccessBlock => get(
            ctx,
            bucket.public_access_block.as_ref(),
            not_configured(op, name),
        ),
        Op::GetBucketOwnershipControls => {
            get(ctx, bucket.ownership.as_ref(), not_configured(op, name))
        }
        Op::GetBucketAcl => Ok(acl(ctx, bucket)),
        Op::GetBucketLogging => Ok(empty_document(ctx, "BucketLoggingStatus")),
        Op::GetBucketWebsite => Err(not_configured(op, name)),
        Op::GetBucketAccelerateConfiguration => Ok(empty_document(ctx, "AccelerateConfiguration")),
        Op::GetBucketRequestPayment => Ok(super::xml(
            ctx,
            StatusCode::OK,
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<RequestPaymentConfiguration xmlns=\"{NAMESPACE}\"><Payer>BucketOwner</Payer></RequestPaymentConfiguration>"
            ),
        )),
        Op::GetBucketReplication => Err(not_configured(op, name)),
        Op::GetObjectLockConfiguration => Err(not_configured(op, name)),
        _ => Err(ctx.request.protocol.unknown_operation(op.name(), "")),
    }
}

fn put(
    ctx: &Ctx<'_>,
    bucket: &mut Bucket,
    op: S3Operation,
) -> Result<Response<ResponseBody>, AwsError> {
    use S3Operation as Op;
    let body = &ctx.request.body;
    let status = match op {
        Op::PutBucketTagging => {
            bucket.tagging = Some(schema::tagging(body)?);
            StatusCode::NO_CONTENT
        }
        Op::PutBucketVersioning => {
            let new = schema::versioning(body)?;
            // Versioning can be suspended once enabled, never unset.
            let merged = match (bucket.versioning.take(), new.text_of("Status")) {
                (Some(old), None) => old,
                _ => new,
            };
            bucket.versioning = Some(merged);
            StatusCode::OK
        }
        Op::PutBucketPolicy => {
            bucket.policy = Some(schema::policy(body)?);
            StatusCode::NO_CONTENT
        }
        Op::PutBucketEncryption => {
            bucket.encryption = Some(schema::encryption(body)?);
            StatusCode::OK
        }
        Op::PutBucketLifecycleConfiguration => {
            bucket.lifecycle = Some(schema::lifecycle(body)?);
            let mut response = empty(ctx, StatusCode::OK);
            response.headers_mut().insert(
                TRANSITION_MINIMUM.0,
                HeaderValue::from_static(TRANSITION_MINIMUM.1),
            );
            return Ok(response);
        }
        Op::PutBucketCors => {
            bucket.cors = Some(schema::cors(body)?);
            StatusCode::OK
        }
        Op::PutPublicAccessBlock => {
            bucket.public_access_block = Some(schema::public_access_block(body)?);
            StatusCode::OK
        }
        _ => {
            bucket.ownership = Some(schema::ownership_controls(body)?);
            StatusCode::OK
        }
    };
    Ok(empty(ctx, status))
}

fn acl(ctx: &Ctx<'_>, bucket: &Bucket) -> Response<ResponseBody> {
    let id = canonical_id(&bucket.owner_id);
    super::xml(
        ctx,
        StatusCode::OK,
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<AccessControlPolicy xmlns=\"{NAMESPACE}\"><Owner><ID>{id}</ID></Owner><AccessControlList><Grant><Grantee xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:type=\"CanonicalUser\"><ID>{id}</ID></Grantee><Permission>FULL_CONTROL</Permission></Grant></AccessControlList></AccessControlPolicy>"
        ),
    )
}
