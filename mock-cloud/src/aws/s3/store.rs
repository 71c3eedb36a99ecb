//! S3's state: buckets with their owner, region, creation time, subresource
//! configurations and objects.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use jiff::Timestamp;

use super::super::xml::Element;

/// One object.
#[derive(Debug, Clone)]
pub(crate) struct Object {
    pub data: Bytes,
    /// The ETag: the payload's MD5 in hex, quoted (S3's for a single-part upload).
    pub etag: String,
    pub last_modified: Timestamp,
    pub content_type: Option<String>,
}

/// One bucket.
#[derive(Debug, Clone)]
pub(crate) struct Bucket {
    /// The owning mock-cloud account.
    pub owner: Arc<str>,
    /// The owner's AWS account ID.
    pub owner_id: Arc<str>,
    pub region: String,
    pub created: Timestamp,
    pub tagging: Option<Element>,
    pub versioning: Option<Element>,
    pub policy: Option<String>,
    /// Since 2023 every bucket has SSE-S3 default encryption; a delete restores it.
    pub encryption: Option<Element>,
    pub lifecycle: Option<Element>,
    pub cors: Option<Element>,
    /// Since April 2023 new buckets block all public access.
    pub public_access_block: Option<Element>,
    /// Since April 2023 new buckets have ACLs disabled (`BucketOwnerEnforced`).
    pub ownership: Option<Element>,
    pub objects: BTreeMap<String, Object>,
}

impl Bucket {
    pub fn new(owner: Arc<str>, owner_id: Arc<str>, region: String, created: Timestamp) -> Bucket {
        Bucket {
            owner,
            owner_id,
            region,
            created,
            tagging: None,
            versioning: None,
            policy: None,
            encryption: Some(default_encryption()),
            lifecycle: None,
            cors: None,
            public_access_block: Some(default_public_access_block()),
            ownership: Some(ownership("BucketOwnerEnforced")),
            objects: BTreeMap::new(),
        }
    }
}

fn leaf(name: &str, text: &str) -> Element {
    Element {
        name: name.to_owned(),
        text: text.to_owned(),
        children: Vec::new(),
    }
}

fn node(name: &str, children: Vec<Element>) -> Element {
    Element {
        name: name.to_owned(),
        text: String::new(),
        children,
    }
}

/// SSE-S3 (AES256) without a bucket key: what S3 applies to every bucket.
pub(crate) fn default_encryption() -> Element {
    node(
        "ServerSideEncryptionConfiguration",
        vec![node(
            "Rule",
            vec![
                node(
                    "ApplyServerSideEncryptionByDefault",
                    vec![leaf("SSEAlgorithm", "AES256")],
                ),
                leaf("BucketKeyEnabled", "false"),
            ],
        )],
    )
}

/// All four public-access blocks on.
pub(crate) fn default_public_access_block() -> Element {
    node(
        "PublicAccessBlockConfiguration",
        [
            "BlockPublicAcls",
            "IgnorePublicAcls",
            "BlockPublicPolicy",
            "RestrictPublicBuckets",
        ]
        .into_iter()
        .map(|name| leaf(name, "true"))
        .collect(),
    )
}

/// An ownership-controls document with one rule.
pub(crate) fn ownership(value: &str) -> Element {
    node(
        "OwnershipControls",
        vec![node("Rule", vec![leaf("ObjectOwnership", value)])],
    )
}

/// Every bucket, by name (bucket names are global, as in S3).
#[derive(Debug, Default)]
pub(crate) struct Store {
    pub buckets: BTreeMap<String, Bucket>,
}
