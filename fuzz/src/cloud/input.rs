//! What a `cloud_requests` input decodes into: a cloud's setup and the requests sent to
//! it, shaped like calls of the generic JSON API and the admin API (requests of any shape
//! are in `any`).

use arbitrary::Arbitrary;

use super::any::AnyRequest;
use crate::pick::{Pick, vocabulary};

vocabulary!(
    /// Names the cloud knows: accounts, collections, fields, query keys, AWS parameters.
    CloudWords,
    8,
    [
        "b1", "b2", "db1", "r1", "acme", "other", "default", "a.b", "x-y_z", "buckets",
        "databases", "records", "name", "spec", "type", "value", "A", "CNAME", "1.2.3.4",
        "size", "true", "0", "1", "-1", "100", "1000000", "since", "limit", "page_token",
        "continue", "Action", "Version", "TableName", "Key", "list-type", "2", "prefix",
        "max-keys", "tagging", "versioning", "location", "acl", "policy", "delete", "uploads",
        "X-Amz-Date", "X-Amz-Credential", "X-Amz-Signature", "X-Amz-Algorithm",
        "AWS4-HMAC-SHA256", "us-east-1", "eu-west-1", "2011-06-15", "2016-11-15", "RoleArn",
        "RoleSessionName", "WebIdentityToken", "DurationSeconds", "InstanceId.1", "ImageId",
        "MinCount", "MaxCount", "Filter.1.Name", "Filter.1.Value.1",
        "TagSpecification.1.ResourceType", "NextToken", "MaxResults",
    ]
);
/// A name the cloud knows, or any text.
pub type Word = Pick<CloudWords>;

/// How the cloud is configured.
#[derive(Arbitrary, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setup {
    /// Generic throttles (429).
    Generic,
    /// AWS JSON throttles (400 `ThrottlingException`).
    AwsJson,
    /// EC2 throttles (503 `RequestLimitExceeded`).
    AwsEc2,
    /// Shadow mode: throttles recorded, not enforced.
    Shadow,
}

/// One request.
pub type Request = crate::timed::Timed<Op>;

/// One input: a cloud and the requests sent to it, in order.
#[derive(Arbitrary, Debug)]
pub struct Session {
    /// The cloud's config.
    pub setup: Setup,
    /// The requests.
    pub requests: Vec<Request>,
}

/// What a request does: mostly calls of the generic API and the admin API shaped as their
/// clients shape them, sometimes a request of any shape (where the AWS-shaped ones are).
#[derive(Arbitrary, Debug)]
pub enum Op {
    Create {
        at: At,
        name: Option<Name>,
        spec: Spec,
        extra: Option<(Word, Json)>,
    },
    Get {
        at: At,
        name: Name,
    },
    List {
        at: At,
        query: Vec<(ListParam, Word)>,
    },
    Update {
        at: At,
        name: Name,
        spec: Spec,
    },
    Delete {
        at: At,
        name: Name,
    },
    Admin(AdminOp),
    Any(AnyRequest),
}

/// An object's name.
pub type Name = crate::pick::Name<CloudWords>;

/// Where a generic API call goes, and with which credentials.
#[derive(Arbitrary, Debug)]
pub struct At {
    pub account: AccountRef,
    pub collection: Collection,
    pub credential: Credential,
}

/// The credentials of a generic API call.
#[derive(Debug)]
pub enum Credential {
    /// The token of the account in the path (three calls in four).
    Own,
    /// Another account's token, or one nobody has (by index).
    Other(u8),
    None,
    Raw(Text),
}

impl<'a> Arbitrary<'a> for Credential {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        if u.ratio(3, 4)? {
            return Ok(Credential::Own);
        }
        Ok(match u.int_in_range(0..=2)? {
            0 => Credential::Other(u.arbitrary()?),
            1 => Credential::None,
            _ => Credential::Raw(u.arbitrary()?),
        })
    }
}

/// A list query parameter.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum ListParam {
    Limit,
    PageToken,
    Other,
}

/// A call of the admin API.
#[derive(Arbitrary, Debug)]
pub enum AdminOp {
    Calls {
        since: Option<u64>,
        limit: Option<u32>,
    },
    Summary,
    Inventory,
    Reset,
    GetFaults,
    PutFaults(Faults),
    GetConfig,
    /// A config document: the session's own with any text after it.
    PutConfig {
        setup: Setup,
        aws: bool,
        tail: Text,
    },
}

/// A faults document.
#[derive(Arbitrary, Debug)]
pub enum Faults {
    Structured {
        seed: Option<u64>,
        latency: Vec<(Class, Latency)>,
        errors: Vec<(Class, u8, u16)>,
        outages: Vec<(u16, u16, u16)>,
    },
    Any(Json),
}

/// An action class, as the documents name them.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Class {
    Read,
    List,
    Mutate,
    Delete,
    Other,
}

/// A latency distribution, in milliseconds.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Latency {
    Fixed(u16),
    Uniform(u16, u16),
    LogNormal(u16, f32),
}

/// Text of any kind (header values, raw paths).
#[derive(Arbitrary, Debug, Clone)]
pub struct Text(pub String);

/// An account in a path: one of the cloud's (by index into `ACCOUNTS`), or any word.
#[derive(Arbitrary, Debug)]
pub enum AccountRef {
    Known(u8),
    Other(Word),
}

/// A collection of the generic API.
#[derive(Arbitrary, Debug)]
pub enum Collection {
    Buckets,
    Databases,
    Records,
    Other(Word),
}

impl Collection {
    /// The path segment.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Collection::Buckets => "buckets",
            Collection::Databases => "databases",
            Collection::Records => "records",
            Collection::Other(w) => w.as_str(),
        }
    }
}

/// A resource's `spec`.
#[derive(Arbitrary, Debug)]
pub enum Spec {
    None,
    /// An object of any fields.
    Fields(Vec<(Word, Json)>),
    /// What a record needs: string `type` and `value`, and more fields.
    Record {
        kind: Word,
        value: Word,
        more: Vec<(Word, Json)>,
    },
    /// Any JSON (mostly not an object).
    Any(Json),
}

impl Spec {
    /// As JSON, or `None` to leave `spec` out.
    #[must_use]
    pub fn value(&self) -> Option<serde_json::Value> {
        let object = |fields: &[(Word, Json)]| {
            fields
                .iter()
                .map(|(k, v)| (k.as_str().to_owned(), v.value()))
                .collect::<serde_json::Map<_, _>>()
        };
        match self {
            Spec::None => None,
            Spec::Fields(fields) => Some(object(fields).into()),
            Spec::Record { kind, value, more } => {
                let mut o = object(more);
                o.insert("type".into(), kind.as_str().into());
                o.insert("value".into(), value.as_str().into());
                Some(o.into())
            }
            Spec::Any(j) => Some(j.value()),
        }
    }
}

/// A small JSON value of the cloud's words.
pub type Json = crate::json::Json<CloudWords>;
