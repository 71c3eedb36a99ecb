//! What an `aws_requests` input decodes into: a cloud's setup and calls of its AWS front
//! ends (S3 in restXml, STS in awsQuery, EC2 in ec2Query, DynamoDB in awsJson1_0), each
//! shaped as the SDKs shape it and signed as they sign it, or not quite.

use arbitrary::{Arbitrary, Unstructured};

use crate::cloud::{AdminOp, Setup};
use crate::pick::{Pick, Vocabulary, vocabulary};

/// Words of the services: names, values, ARNs.
pub type Word = Pick<AwsWords>;
/// A small JSON value.
pub type Json = crate::json::Json<AwsWords>;

vocabulary!(
    /// Values the services meet.
    AwsWords,
    8,
    [
        "bkt-0", "bkt-1", "t0", "t1", "10.0.0.0/16", "10.1.0.0/24", "0.0.0.0/0", "vpc-00000000",
        "true", "false", "0", "1", "5", "100", "1000", "3600", "43200", "-1", "S", "N", "B",
        "HASH", "RANGE", "PAY_PER_REQUEST", "PROVISIONED", "Enabled", "Suspended", "Name", "env",
        "prod", "us-east-1", "eu-west-1", "default", "dedicated",
        "arn:aws:iam::111111111111:role/r", "arn:aws:iam::222222222222:role/r",
        "arn:aws:iam::999999999999:role/r", "arn:aws:dynamodb:us-east-1:111111111111:table/t0",
        "session", "x", "",
    ]
);

vocabulary!(
    /// S3 bucket names, valid and not.
    Buckets,
    16,
    ["bkt-0", "bkt-1", "bkt-2", "a", "Bad_Name", "bkt..x", "192.168.1.1", "xn--bkt", "bkt-0-s3alias"]
);

vocabulary!(
    /// S3 object keys.
    Keys,
    16,
    ["k", "dir/k", "a.txt", "dir/sub/k.json", "k~1", "-"]
);

vocabulary!(
    /// S3 subresources and query keys.
    S3Params,
    16,
    [
        "location", "tagging", "versioning", "policy", "encryption", "lifecycle", "cors",
        "publicAccessBlock", "ownershipControls", "acl", "logging", "website", "accelerate",
        "requestPayment", "replication", "object-lock", "uploads", "delete", "list-type",
        "prefix", "max-keys", "continuation-token", "delimiter", "x-id", "versionId",
        "max-buckets", "bucket-region",
    ]
);

vocabulary!(
    /// S3 request headers.
    S3Headers,
    16,
    [
        "content-md5", "x-amz-acl", "content-type", "range", "if-match", "if-none-match",
        "x-amz-expected-bucket-owner", "x-amz-security-token", "x-amz-decoded-content-length",
        "content-encoding", "x-amz-bucket-object-lock-enabled", "x-amz-object-ownership",
    ]
);

vocabulary!(
    /// Element names of S3's XML bodies.
    XmlNames,
    16,
    [
        "CreateBucketConfiguration", "LocationConstraint", "Tagging", "TagSet", "Tag", "Key",
        "Value", "VersioningConfiguration", "Status", "MfaDelete", "Policy",
        "ServerSideEncryptionConfiguration", "Rule", "ApplyServerSideEncryptionByDefault",
        "SSEAlgorithm", "LifecycleConfiguration", "CORSConfiguration", "CORSRule",
        "PublicAccessBlockConfiguration", "BlockPublicAcls", "OwnershipControls",
        "ObjectOwnership",
    ]
);

vocabulary!(
    /// Query-protocol parameters (STS and EC2).
    QueryParams,
    16,
    [
        "RoleArn", "RoleSessionName", "DurationSeconds", "WebIdentityToken", "ExternalId",
        "Policy", "CidrBlock", "VpcId", "VpcId.1", "InstanceTenancy", "Filter.1.Name",
        "Filter.1.Value.1", "ResourceId.1", "Tag.1.Key", "Tag.1.Value", "MaxResults",
        "NextToken", "DryRun", "EnableDnsSupport.Value", "EnableDnsHostnames.Value",
        "TagSpecification.1.ResourceType", "TagSpecification.1.Tag.1.Key",
        "TagSpecification.1.Tag.1.Value", "AmazonProvidedIpv6CidrBlock",
    ]
);

vocabulary!(
    /// DynamoDB request fields.
    DynamoKeys,
    16,
    [
        "TableName", "AttributeDefinitions", "KeySchema", "BillingMode", "ProvisionedThroughput",
        "Tags", "ResourceArn", "TagKeys", "Limit", "ExclusiveStartTableName",
        "GlobalSecondaryIndexes", "LocalSecondaryIndexes", "StreamSpecification",
        "SSESpecification", "TableClass", "DeletionProtectionEnabled",
    ]
);

vocabulary!(
    /// Regions.
    Regions,
    16,
    ["us-east-1", "eu-west-1", "us-west-2"]
);

/// The operations of one service, named as on the wire, from mock-cloud's catalog.
macro_rules! operations {
    ($(#[$doc:meta])* $name:ident, $names:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Arbitrary)]
        pub struct $name;

        impl Vocabulary for $name {
            const WORDS: &'static [&'static str] = $names;
            const ANY_TEXT_ONE_IN: u8 = 16;
        }
    };
}
operations!(
    /// STS's operations.
    StsOps,
    mock_cloud::StsOperation::NAMES
);
operations!(
    /// EC2's operations.
    Ec2Ops,
    mock_cloud::Ec2Operation::NAMES
);
operations!(
    /// DynamoDB's operations.
    DynamoOps,
    &[
        "CreateTable", "DescribeTable", "DeleteTable", "ListTables", "TagResource",
        "UntagResource", "ListTagsOfResource",
    ]
);

/// One input: a cloud and the calls sent to it, in order.
#[derive(Arbitrary, Debug)]
pub struct Session {
    /// The cloud's config.
    pub setup: Setup,
    /// The calls.
    pub requests: Vec<Request>,
}

/// One call.
#[derive(Arbitrary, Debug)]
pub struct Request {
    /// Virtual time to let pass before it, in milliseconds.
    pub wait_ms: u16,
    /// How it is signed.
    pub signing: Signing,
    /// What it calls.
    pub call: Call,
}

/// How a call is signed: mostly as an SDK signs it, with the key of one of the cloud's
/// accounts, for the call's own service, now.
#[derive(Debug)]
pub struct Signing {
    /// Which account's key (one past the accounts: a key the cloud does not know).
    pub key: u8,
    /// Another service in the credential scope than the call's.
    pub service: Option<Pick<Services>>,
    pub region: Pick<Regions>,
    /// Signed long ago instead of now.
    pub stale: bool,
    pub presigned: bool,
    pub unsigned_payload: bool,
    pub tamper: bool,
    /// Not signed at all.
    pub anonymous: bool,
}

vocabulary!(
    /// Signing names of services.
    Services,
    8,
    ["s3", "sts", "ec2", "dynamodb", "iam"]
);

impl<'a> Arbitrary<'a> for Signing {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Signing {
            key: if u.ratio(7, 8)? {
                u.int_in_range(0..=1)?
            } else {
                2
            },
            service: if u.ratio(1, 16)? {
                Some(u.arbitrary()?)
            } else {
                None
            },
            region: u.arbitrary()?,
            stale: u.ratio(1, 16)?,
            presigned: u.ratio(1, 8)?,
            unsigned_payload: u.arbitrary()?,
            tamper: u.ratio(1, 16)?,
            anonymous: u.ratio(1, 32)?,
        })
    }
}

/// A call of one service, or of the admin API (faults, reset, config).
#[derive(Arbitrary, Debug)]
pub enum Call {
    S3(S3Call),
    Sts(QueryCall<StsOps>),
    Ec2(QueryCall<Ec2Ops>),
    DynamoDb(DynamoCall),
    Admin(AdminOp),
}

/// An S3 call (restXml, path style).
#[derive(Arbitrary, Debug)]
pub struct S3Call {
    pub method: S3Method,
    pub bucket: Option<Pick<Buckets>>,
    pub key: Option<Pick<Keys>>,
    /// A subresource (`?tagging`), and more parameters.
    pub subresource: Option<Pick<S3Params>>,
    pub params: Vec<(Pick<S3Params>, Word)>,
    pub headers: Vec<(Pick<S3Headers>, Word)>,
    pub body: S3Body,
}

/// An S3 method.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum S3Method {
    Get,
    Put,
    Head,
    Delete,
    Post,
}

/// An S3 body.
#[derive(Arbitrary, Debug)]
pub enum S3Body {
    Empty,
    Xml(Xml),
    Bytes(Vec<u8>),
}

/// An XML element tree with the element names S3 reads.
#[derive(Arbitrary, Debug)]
pub enum Xml {
    Text(Word),
    Element {
        name: Pick<XmlNames>,
        children: Vec<Xml>,
    },
    Raw(String),
}

/// A query-protocol call (STS, EC2): `Action`, `Version` and parameters, form-encoded.
#[derive(Arbitrary, Debug)]
pub struct QueryCall<Ops: Vocabulary> {
    pub action: Pick<Ops>,
    /// Another `Version` than the service's (or none).
    pub version: Option<Option<Word>>,
    pub params: Vec<(Pick<QueryParams>, Word)>,
    /// Sent in the query string instead of a form body.
    pub in_query: bool,
}

/// A DynamoDB call: `X-Amz-Target` and a JSON object.
#[derive(Arbitrary, Debug)]
pub struct DynamoCall {
    pub operation: Pick<DynamoOps>,
    pub fields: Vec<(Pick<DynamoKeys>, DynamoValue)>,
    /// Another content type than `application/x-amz-json-1.0`.
    pub content_type: Option<Word>,
}

/// A DynamoDB field's value: shaped as the field wants, or any JSON.
#[derive(Arbitrary, Debug)]
pub enum DynamoValue {
    Name(Word),
    Attributes(Vec<(Word, Word)>),
    Keys(Vec<(Word, Word)>),
    Throughput(i64, i64),
    Tags(Vec<(Word, Word)>),
    Strings(Vec<Word>),
    Any(Json),
}
