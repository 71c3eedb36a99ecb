//! Requests of any shape: any method, path, query, credentials (bearer tokens, SigV4
//! headers and presigned queries), headers and body (JSON, forms, `X-Amz-Target` JSON, S3
//! XML, config and faults documents), with words drawn from what the cloud and AWS's wire
//! protocols know.

mod build;

use arbitrary::Arbitrary;

use super::input::{AccountRef, Collection, Json, Setup, Spec, Text, Word};
use crate::pick::{Pick, vocabulary};

vocabulary!(
    /// Header names the cloud reads.
    HeaderNames,
    8,
    [
        "authorization", "content-type", "content-length", "x-amz-date", "x-amz-target",
        "x-amz-content-sha256", "x-amz-security-token", "x-amz-user-agent", "host", "date",
        "content-md5", "x-amz-acl", "transfer-encoding", "expect", "range",
    ]
);
/// A header name.
pub type HeaderName = Pick<HeaderNames>;

vocabulary!(
    /// The services a SigV4 credential scope names.
    Services,
    16,
    ["s3", "sts", "ec2", "dynamodb", "iam", "sqs"]
);
/// A service's signing name.
pub type AwsService = Pick<Services>;

vocabulary!(
    /// Query-protocol actions (STS, EC2).
    Actions,
    16,
    [
        "AssumeRole", "AssumeRoleWithWebIdentity", "GetCallerIdentity", "GetSessionToken",
        "DescribeInstances", "RunInstances", "TerminateInstances", "CreateTags",
        "DescribeVpcs", "CreateVpc", "DeleteVpc", "DescribeSecurityGroups",
        "CreateSecurityGroup", "AuthorizeSecurityGroupIngress", "DescribeTags",
    ]
);
/// A query-protocol action.
pub type Action = Pick<Actions>;

vocabulary!(
    /// DynamoDB operations (`X-Amz-Target: DynamoDB_20120810.{op}`).
    DynamoOps,
    16,
    [
        "CreateTable", "DescribeTable", "DeleteTable", "UpdateTable", "ListTables", "PutItem",
        "GetItem", "DeleteItem", "TagResource", "ListTagsOfResource",
        "DescribeContinuousBackups", "DescribeTimeToLive",
    ]
);
/// A DynamoDB operation.
pub type DynamoOp = Pick<DynamoOps>;

vocabulary!(
    /// Element names of S3's XML bodies.
    XmlNames,
    16,
    [
        "CreateBucketConfiguration", "LocationConstraint", "Tagging", "TagSet", "Tag", "Key",
        "Value", "VersioningConfiguration", "Status", "Delete", "Object", "Quiet",
        "AccessControlPolicy", "ServerSideEncryptionConfiguration", "Rule",
    ]
);
/// An XML element name.
pub type XmlName = Pick<XmlNames>;

/// A request of any shape.
#[derive(Arbitrary, Debug)]
pub struct AnyRequest {
    /// The method.
    pub method: Method,
    /// What it addresses.
    pub target: Target,
    /// Its query.
    pub query: Query,
    /// Its credentials.
    pub auth: Auth,
    /// Its body (and content type).
    pub body: Body,
    /// More headers.
    pub headers: Vec<(HeaderName, Text)>,
}

/// An HTTP method.
#[derive(Arbitrary, Debug, Clone)]
pub enum Method {
    Get,
    Post,
    Put,
    Delete,
    Patch,
    Head,
    Options,
    Other(Word),
}

impl Method {
    /// The method's name on the wire.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Patch => "PATCH",
            Method::Head => "HEAD",
            Method::Options => "OPTIONS",
            Method::Other(w) => w.as_str(),
        }
    }
}

/// What a request addresses.
#[derive(Arbitrary, Debug)]
pub enum Target {
    /// `/v1/accounts/{account}/{collection}[/{name}]`.
    Api {
        account: AccountRef,
        collection: Collection,
        name: Option<Word>,
    },
    /// An admin endpoint.
    Admin(Admin),
    /// `/metrics`.
    Metrics,
    /// `/`, where the query protocols (STS, EC2) and DynamoDB post.
    Root,
    /// An S3 path: `/{bucket}[/{key}]`.
    S3 { bucket: Word, key: Option<Word> },
    /// Any path.
    Raw(Text),
}

/// The admin API's endpoints.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Admin {
    Calls,
    Summary,
    Inventory,
    Faults,
    Reset,
    Config,
    Unknown,
}

/// A query string.
#[derive(Arbitrary, Debug)]
pub enum Query {
    None,
    Pairs(Vec<(Word, Word)>),
    Raw(Text),
}

/// A request's credentials.
#[derive(Arbitrary, Debug)]
pub enum Auth {
    None,
    /// `Authorization: Bearer` with an account's token (by index; past the accounts, a
    /// token nobody has).
    Bearer(u8),
    BearerRaw(Text),
    /// A SigV4 signature.
    SigV4(SigV4),
    /// Any `Authorization` value.
    Raw(Text),
}

/// A SigV4-signed request.
#[derive(Arbitrary, Debug)]
pub struct SigV4 {
    /// The service in the credential scope.
    pub service: AwsService,
    /// The region.
    pub region: Word,
    /// Which account's key signs (an index past the accounts: an unknown key).
    pub key: u8,
    /// Whether the signature is right (else a signature of other bytes).
    pub valid: bool,
    /// Whether the date is the cloud's now (else a day long ago).
    pub current: bool,
    /// S3's `x-amz-content-sha256`: the body's hash, or `UNSIGNED-PAYLOAD`.
    pub unsigned_payload: bool,
    /// Signed in the query string (a presigned URL) instead of the header.
    pub presigned: bool,
}

/// A request body.
#[derive(Arbitrary, Debug)]
pub enum Body {
    Empty,
    Raw(Vec<u8>),
    /// A generic create or update body: `{"name": .., "spec": ..}`.
    Resource {
        name: Option<Word>,
        spec: Spec,
        extra: Option<(Word, Json)>,
    },
    /// Any JSON.
    Json(Json),
    /// A query-protocol form (`Action=...&Version=...`).
    Form {
        action: Action,
        pairs: Vec<(Word, Word)>,
    },
    /// A DynamoDB call: `X-Amz-Target: DynamoDB_20120810.{op}` and a JSON body.
    DynamoDb {
        operation: DynamoOp,
        body: Json,
    },
    /// An S3 XML body.
    Xml(Xml),
    /// A faults document (for `PUT /admin/v1/faults`).
    Faults(Json),
    /// A config document (for `PUT /admin/v1/config`) with any text after it.
    Config {
        setup: Setup,
        aws: bool,
        tail: Text,
    },
}

/// An XML element tree, with the element names S3 reads.
#[derive(Arbitrary, Debug, Clone)]
pub enum Xml {
    Text(Word),
    Element { name: XmlName, children: Vec<Xml> },
    Raw(Text),
}

impl Xml {
    /// Writes the tree as XML text (text is not escaped: any text is fair input).
    pub fn write(&self, out: &mut String) {
        match self {
            Xml::Text(w) => out.push_str(w.as_str()),
            Xml::Raw(t) => out.push_str(&t.0),
            Xml::Element { name, children } => {
                out.push_str(&format!("<{}>", name.as_str()));
                for c in children {
                    c.write(out);
                }
                out.push_str(&format!("</{}>", name.as_str()));
            }
        }
    }
}
