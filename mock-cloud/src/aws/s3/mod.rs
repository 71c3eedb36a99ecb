//! Amazon S3 (restXml): buckets, their subresource configurations and objects,
//! path-style (`/bucket/key`) or virtual-hosted (`bucket.s3.<anything>`).
//!
//! # Semantics
//! - Bucket names are global across accounts, as in S3; a bucket of another account
//!   answers 403 `AccessDenied`, a missing one 404 `NoSuchBucket` (a `HEAD`: the status
//!   alone).
//! - A bucket is in the region its create was signed for. In `us-east-1` a create of a
//!   bucket the caller already owns answers 200 (S3's legacy behaviour); in any other
//!   region 409 `BucketAlreadyOwnedByYou`; a bucket of another account 409
//!   `BucketAlreadyExists`. A `LocationConstraint` must match the signing region
//!   (`IllegalLocationConstraintException`); `us-east-1` takes none
//!   (`InvalidLocationConstraint`).
//! - New buckets carry S3's defaults since 2023: SSE-S3 encryption, all public access
//!   blocked, `BucketOwnerEnforced` ownership; versioning, logging and acceleration
//!   unset; the requester-pays payer `BucketOwner`.
//! - Subresources that are not configured answer S3's own errors: `NoSuchTagSet`,
//!   `NoSuchBucketPolicy`, `NoSuchLifecycleConfiguration`, `NoSuchCORSConfiguration`,
//!   `NoSuchPublicAccessBlockConfiguration`, `OwnershipControlsNotFoundError`,
//!   `NoSuchWebsiteConfiguration`, `ReplicationConfigurationNotFoundError`,
//!   `ObjectLockConfigurationNotFoundError`, and (only after a delete would S3 have none,
//!   which it never does now) `ServerSideEncryptionConfigurationNotFoundError`.
//! - Puts of subresources that S3 requires a checksum for need `Content-MD5` or an
//!   `x-amz-checksum-*` header. `Content-MD5` on any put is checked against the body
//!   (`InvalidDigest`, `BadDigest`); the `x-amz-checksum-*` values of a subresource put
//!   are not.
//! - A bucket with objects cannot be deleted: 409 `BucketNotEmpty`.
//! - Operations mock-cloud does not answer get S3's 501 `NotImplemented`.

mod buckets;
mod objects;
mod schema;
pub(crate) mod store;
mod subresources;

use http::{Method, Response, StatusCode};

use super::contract::{AwsRequest, Ctx, Routed, Unrouted};
use super::envelope::{self, AwsError};
use super::signing;
use crate::http::respond::ResponseBody;
use crate::service::{Operation, S3Operation};

/// S3's XML namespace.
pub(crate) const NAMESPACE: &str = "http://s3.amazonaws.com/doc/2006-03-01/";

/// The subresources that name bucket operations, as query keys.
const SUBRESOURCES: [&str; 16] = [
    "location",
    "tagging",
    "versioning",
    "policy",
    "encryption",
    "lifecycle",
    "cors",
    "publicAccessBlock",
    "ownershipControls",
    "acl",
    "logging",
    "website",
    "accelerate",
    "requestPayment",
    "replication",
    "object-lock",
];

/// The bucket and key a request addresses: from a virtual host (`bucket.s3.…`) or the
/// path's first segment.
fn target(request: &AwsRequest<'_>) -> (Option<String>, Option<String>) {
    let decoded =
        String::from_utf8_lossy(&signing::percent_decode(request.raw_path.as_bytes())).into_owned();
    let path = decoded.strip_prefix('/').unwrap_or(&decoded);
    let host = request.authority.unwrap_or_default();
    let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
    let virtual_bucket = host
        .find(".s3.")
        .or_else(|| host.find(".s3-"))
        .filter(|i| *i > 0)
        .map(|i| host[..i].to_owned());
    let (bucket, key) = match virtual_bucket {
        Some(bucket) => (Some(bucket), Some(path.to_owned())),
        None => match path.split_once('/') {
            Some((bucket, key)) => (Some(bucket.to_owned()), Some(key.to_owned())),
            None => (Some(path.to_owned()), None),
        },
    };
    let bucket = bucket.filter(|b| !b.is_empty());
    let key = key.filter(|k| !k.is_empty());
    (bucket, key)
}

pub(crate) fn route(request: &AwsRequest<'_>) -> Result<Routed, Unrouted> {
    use S3Operation as Op;
    let (bucket, key) = target(request);
    let method = request.method;
    let sub = request
        .query
        .iter()
        .map(|(k, _)| k.as_ref())
        .find(|k| SUBRESOURCES.contains(k));
    // Parameters that do not name an operation: a presigned URL's (SigV4, or SigV2's
    // which authentication refuses), and ListBuckets' own.
    let other_query = request.query.iter().any(|(k, _)| {
        !SUBRESOURCES.contains(&k.as_ref())
            && !k.starts_with("X-Amz-")
            && !k.starts_with("x-amz-")
            && !matches!(k.as_ref(), "AWSAccessKeyId" | "Expires" | "Signature")
            && !is_list_buckets_param(k)
    });
    let op = match (&bucket, &key, method, sub) {
        (None, _, &Method::GET, None) => Some(Op::ListBuckets),
        (None, _, _, _) => {
            return Err(Unrouted::new(
                AwsError::new(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "MethodNotAllowed",
                    "The specified method is not allowed against this resource.",
                )
                .with_field("Method", method.as_str())
                .with_field("ResourceType", "SERVICE"),
            ));
        }
        (Some(_), None, m, sub) if !other_query => bucket_operation(m, sub),
        (Some(_), Some(_), m, None) if !other_query => match *m {
            Method::PUT => Some(Op::PutObject),
            Method::GET => Some(Op::GetObject),
            Method::HEAD => Some(Op::HeadObject),
            Method::DELETE => Some(Op::DeleteObject),
            _ => None,
        },
        _ => None,
    };
    let name = match (&bucket, &key) {
        (Some(b), Some(k)) => format!("{b}/{k}"),
        (Some(b), None) => b.clone(),
        _ => String::new(),
    };
    let Some(op) = op else {
        return Err(
            Unrouted::new(request.protocol.unknown_operation("", "")).journalled_as(None, name)
        );
    };
    let class = u8::from(!matches!(*method, Method::GET | Method::HEAD));
    let resource = match (&bucket, &key) {
        (Some(b), Some(k)) => match k.rfind('/') {
            Some(i) => format!("{b}/{}", &k[..=i]),
            None => format!("{b}/"),
        },
        (Some(b), None) => b.clone(),
        _ => String::new(),
    };
    Ok(Routed {
        op: Operation::from(op),
        class,
        resource,
        name,
        anonymous: false,
    })
}

/// Query parameters that do not change the operation: ListBuckets' own, and the `x-id`
/// the SDKs add to object operations (`?x-id=PutObject`).
fn is_list_buckets_param(key: &str) -> bool {
    matches!(
        key,
        "max-buckets" | "continuation-token" | "prefix" | "bucket-region" | "x-id"
    )
}

fn bucket_operation(method: &Method, sub: Option<&str>) -> Option<S3Operation> {
    use S3Operation as Op;
    let Some(sub) = sub else {
        return plain_bucket_operation(method);
    };
    let op = match (method.as_str(), sub) {
        ("GET", "location") => Op::GetBucketLocation,
        ("GET", "tagging") => Op::GetBucketTagging,
        ("PUT", "tagging") => Op::PutBucketTagging,
        ("DELETE", "tagging") => Op::DeleteBucketTagging,
        ("GET", "versioning") => Op::GetBucketVersioning,
        ("PUT", "versioning") => Op::PutBucketVersioning,
        ("GET", "policy") => Op::GetBucketPolicy,
        ("PUT", "policy") => Op::PutBucketPolicy,
        ("DELETE", "policy") => Op::DeleteBucketPolicy,
        ("GET", "encryption") => Op::GetBucketEncryption,
        ("PUT", "encryption") => Op::PutBucketEncryption,
        ("DELETE", "encryption") => Op::DeleteBucketEncryption,
        ("GET", "lifecycle") => Op::GetBucketLifecycleConfiguration,
        ("PUT", "lifecycle") => Op::PutBucketLifecycleConfiguration,
        ("DELETE", "lifecycle") => Op::DeleteBucketLifecycle,
        ("GET", "cors") => Op::GetBucketCors,
        ("PUT", "cors") => Op::PutBucketCors,
        ("DELETE", "cors") => Op::DeleteBucketCors,
        ("GET", "publicAccessBlock") => Op::GetPublicAccessBlock,
        ("PUT", "publicAccessBlock") => Op::PutPublicAccessBlock,
        ("DELETE", "publicAccessBlock") => Op::DeletePublicAccessBlock,
        ("GET", "ownershipControls") => Op::GetBucketOwnershipControls,
        ("PUT", "ownershipControls") => Op::PutBucketOwnershipControls,
        ("DELETE", "ownershipControls") => Op::DeleteBucketOwnershipControls,
        ("GET", "acl") => Op::GetBucketAcl,
        ("GET", "logging") => Op::GetBucketLogging,
        ("GET", "website") => Op::GetBucketWebsite,
        ("GET", "accelerate") => Op::GetBucketAccelerateConfiguration,
        ("GET", "requestPayment") => Op::GetBucketRequestPayment,
        ("GET", "replication") => Op::GetBucketReplication,
        ("GET", "object-lock") => Op::GetObjectLockConfiguration,
        _ => return None,
    };
    Some(op)
}

/// The bucket operations without a subresource.
fn plain_bucket_operation(method: &Method) -> Option<S3Operation> {
    match *method {
        Method::PUT => Some(S3Operation::CreateBucket),
        Method::HEAD => Some(S3Operation::HeadBucket),
        Method::DELETE => Some(S3Operation::DeleteBucket),
        _ => None,
    }
}

pub(crate) fn handle(ctx: &Ctx<'_>, routed: &Routed) -> Result<Response<ResponseBody>, AwsError> {
    use S3Operation as Op;
    let Some(caller) = ctx.caller else {
        return Err(ctx.request.protocol.missing_auth());
    };
    let (bucket, key) = target(ctx.request);
    let bucket = bucket.unwrap_or_default();
    let op = S3Operation::of(routed.op).unwrap_or(Op::ListBuckets);
    // PutObject checks the MD5 of its payload (an aws-chunked body decoded); S3 ignores
    // `Content-MD5` on requests that carry no body (GET, HEAD, DELETE).
    if op != Op::PutObject
        && *ctx.request.method == Method::PUT
        && ctx.request.headers.contains_key("content-md5")
    {
        use md5::Digest as _;
        objects::check_content_md5(ctx.request.headers, &md5::Md5::digest(&ctx.request.body))?;
    }
    let mut store = ctx.state().s3.lock();
    match op {
        Op::ListBuckets => buckets::list(ctx, &store, caller),
        Op::CreateBucket => buckets::create(ctx, &mut store, caller, &bucket),
        Op::HeadBucket => buckets::head(ctx, &store, caller, &bucket),
        Op::DeleteBucket => buckets::delete(ctx, &mut store, caller, &bucket),
        Op::GetBucketLocation => buckets::location(ctx, &store, caller, &bucket),
        Op::PutObject | Op::GetObject | Op::HeadObject | Op::DeleteObject => objects::handle(
            ctx,
            &mut store,
            caller,
            op,
            &bucket,
            &key.unwrap_or_default(),
        ),
        _ => subresources::handle(ctx, &mut store, caller, op, &bucket),
    }
}

/// What per-resource faults need of the bucket `name` (see
/// [`super::resource_faults::Facts`]): a create's requested tags; an existing bucket's
/// tags, creation time and `NoSuchBucket` for a read.
pub(crate) fn facts(
    ctx: &Ctx<'_>,
    _routed: &Routed,
    name: &str,
    action: crate::model::Action,
    tags: bool,
) -> super::resource_faults::Facts {
    use super::resource_faults::{Facts, tag_set};
    if action == crate::model::Action::Create {
        return Facts {
            tags: tags.then(|| buckets::create_tags(&ctx.request.body)),
            ..Facts::default()
        };
    }
    let store = ctx.state().s3.lock();
    let Some(bucket) = store.buckets.get(name) else {
        return Facts::default();
    };
    Facts {
        tags: tags.then(|| {
            let set = bucket.tagging.as_ref().and_then(|t| t.child("TagSet"));
            tag_set(set)
        }),
        created: Some(bucket.created),
        not_found: (action == crate::model::Action::Get).then(|| no_such_bucket(name)),
        new_id: None,
    }
}

/// An XML answer: `200` with `application/xml`.
pub(crate) fn xml(ctx: &Ctx<'_>, status: StatusCode, body: String) -> Response<ResponseBody> {
    envelope::respond(&ctx.reply, status, "application/xml", body)
}

/// An empty answer.
pub(crate) fn empty(ctx: &Ctx<'_>, status: StatusCode) -> Response<ResponseBody> {
    envelope::respond(&ctx.reply, status, "", bytes::Bytes::new())
}

pub(crate) fn no_such_bucket(bucket: &str) -> AwsError {
    AwsError::new(
        StatusCode::NOT_FOUND,
        "NoSuchBucket",
        "The specified bucket does not exist",
    )
    .with_field("BucketName", bucket)
}

pub(crate) fn access_denied() -> AwsError {
    AwsError::new(StatusCode::FORBIDDEN, "AccessDenied", "Access Denied")
}

pub(crate) fn malformed_xml() -> AwsError {
    AwsError::new(
        StatusCode::BAD_REQUEST,
        "MalformedXML",
        "The XML you provided was not well-formed or did not validate against our published schema",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::{Protocol, Service};

    fn routed(method: &Method, uri: &str, host: Option<&str>) -> Result<Routed, Unrouted> {
        let uri: http::Uri = uri.parse().unwrap();
        let headers = http::HeaderMap::new();
        let raw_query = uri.query();
        let request = AwsRequest {
            service: Service::S3,
            protocol: Protocol::RestXml,
            method,
            raw_path: uri.path(),
            raw_query,
            query: raw_query
                .map(|q| super::super::params::borrowed_pairs(q.as_bytes()))
                .unwrap_or_default(),
            headers: &headers,
            authority: host,
            body: bytes::Bytes::new(),
            region: "us-east-1".into(),
        };
        route(&request)
    }

    fn op(method: Method, uri: &str) -> Option<&'static str> {
        routed(&method, uri, None).ok().map(|r| r.op.name())
    }

    #[test]
    fn methods_paths_and_subresources_name_the_operation() {
        assert_eq!(op(Method::GET, "/"), Some("ListBuckets"));
        assert_eq!(op(Method::PUT, "/b"), Some("CreateBucket"));
        assert_eq!(op(Method::HEAD, "/b/"), Some("HeadBucket"));
        assert_eq!(op(Method::GET, "/b?tagging"), Some("GetBucketTagging"));
        assert_eq!(
            op(Method::DELETE, "/b?lifecycle"),
            Some("DeleteBucketLifecycle")
        );
        assert_eq!(
            op(Method::GET, "/b?object-lock"),
            Some("GetObjectLockConfiguration")
        );
        assert_eq!(op(Method::PUT, "/b/dir/k%20ey"), Some("PutObject"));
        assert_eq!(op(Method::GET, "/b?list-type=2"), None);
        assert_eq!(op(Method::POST, "/b?tagging"), None);
        let unrouted = routed(&Method::PUT, "/", None).unwrap_err();
        assert_eq!(unrouted.error.code, "MethodNotAllowed");
    }

    #[test]
    fn reads_and_writes_fall_in_their_class_per_bucket_or_prefix() {
        let head = routed(&Method::HEAD, "/b", None).unwrap();
        assert_eq!(
            (head.class, head.resource.as_str(), head.name.as_str()),
            (0, "b", "b")
        );
        let put = routed(&Method::PUT, "/b/dir/sub/k", None).unwrap();
        assert_eq!(
            (put.class, put.resource.as_str(), put.name.as_str()),
            (1, "b/dir/sub/", "b/dir/sub/k")
        );
    }

    #[test]
    fn a_virtual_host_names_the_bucket() {
        let r = routed(
            &Method::GET,
            "/?tagging",
            Some("my-bucket.s3.localhost:4566"),
        )
        .unwrap();
        assert_eq!(
            (r.op.name(), r.name.as_str()),
            ("GetBucketTagging", "my-bucket")
        );
        let r = routed(
            &Method::PUT,
            "/a/b",
            Some("my-bucket.s3.us-east-1.amazonaws.com"),
        )
        .unwrap();
        assert_eq!(
            (r.op.name(), r.name.as_str()),
            ("PutObject", "my-bucket/a/b")
        );
    }
}
