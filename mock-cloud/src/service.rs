//! The catalog of services and operations: every call the cloud answers is one operation of
//! one service, named here once for the journal, the summary, the metrics, the quotas and
//! the faults.
//!
//! # Adding a service
//! 1. Declare its operations with [`operations!`] (an enum whose variants are the wire
//!    names, such as `CreateVpc`) and a `From` impl into [`Operation`].
//! 2. Add a [`Service`] variant, put it in [`Service::ALL`] and give it its row in `ROWS`
//!    (same order): its name, SigV4 signing name, protocol, operations, quota classes, XML
//!    namespace and JSON error prefix.
//! 3. Write the service's module under `aws/` (see the module docs of `aws/mod.rs`).
//!
//! An operation is stored as two bytes (service, index), so a service has at most 255
//! operations.

use std::fmt;

/// Declares an enum of a service's operations, named as on the wire, with their names in
/// declaration order (the order of their journal numbers).
macro_rules! operations {
    ($(#[$meta:meta])* $name:ident { $($op:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $(
            #[doc = concat!("`", stringify!($op), "`")]
            $op
        ),+ }

        impl $name {
            /// Every operation, in journal-number order.
            pub const ALL: &'static [$name] = &[$($name::$op),+];
            /// The wire names, in the same order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($op)),+];

            /// The wire name.
            pub fn name(self) -> &'static str {
                Self::NAMES[self as usize]
            }

            /// The operation of this wire name.
            pub fn parse(name: &str) -> Option<$name> {
                Self::NAMES.iter().position(|n| *n == name).map(|i| Self::ALL[i])
            }

            /// The service's operation of a catalog [`Operation`], by its number (no
            /// name lookup on the request path).
            pub(crate) fn of(op: Operation) -> Option<$name> {
                Self::ALL
                    .get(usize::from(op.index()))
                    .copied()
                    .filter(|candidate| Operation::from(*candidate) == op)
            }
        }
    };
}

operations! {
    /// The S3 operations mock-cloud answers (restXml).
    S3Operation {
        ListBuckets, CreateBucket, HeadBucket, DeleteBucket, GetBucketLocation,
        GetBucketTagging, PutBucketTagging, DeleteBucketTagging,
        GetBucketVersioning, PutBucketVersioning,
        GetBucketPolicy, PutBucketPolicy, DeleteBucketPolicy,
        GetBucketEncryption, PutBucketEncryption, DeleteBucketEncryption,
        GetBucketLifecycleConfiguration, PutBucketLifecycleConfiguration, DeleteBucketLifecycle,
        GetBucketCors, PutBucketCors, DeleteBucketCors,
        GetPublicAccessBlock, PutPublicAccessBlock, DeletePublicAccessBlock,
        GetBucketOwnershipControls, PutBucketOwnershipControls, DeleteBucketOwnershipControls,
        GetBucketAcl, GetBucketLogging, GetBucketWebsite, GetBucketAccelerateConfiguration,
        GetBucketRequestPayment, GetBucketReplication, GetObjectLockConfiguration,
        PutObject, GetObject, HeadObject, DeleteObject,
    }
}

operations! {
    /// The STS operations mock-cloud answers (awsQuery).
    StsOperation { GetCallerIdentity, AssumeRole, AssumeRoleWithWebIdentity }
}

operations! {
    /// The DynamoDB operations mock-cloud answers (awsJson1_0): the table control plane.
    DynamoDbOperation {
        CreateTable, DescribeTable, DeleteTable, ListTables,
        TagResource, UntagResource, ListTagsOfResource,
    }
}

operations! {
    /// The EC2 operations mock-cloud answers (ec2Query).
    Ec2Operation {
        CreateVpc, DescribeVpcs, DeleteVpc, ModifyVpcAttribute,
        CreateTags, DeleteTags, DescribeTags,
    }
}

/// The generic JSON API's operations are its actions.
const GENERIC_OPERATIONS: &[&str] = &["create", "get", "update", "delete", "list"];

/// The wire protocol of an AWS service: how requests name their operation and how errors
/// look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// REST with XML bodies (S3): `<Error><Code>…` with `x-amz-request-id` and `x-amz-id-2`.
    RestXml,
    /// Form-encoded `Action=…` requests, XML answers (STS, IAM):
    /// `<ErrorResponse><Error><Type>Sender</Type><Code>…`.
    AwsQuery,
    /// EC2's query dialect: `<Response><Errors><Error><Code>…` with `<RequestID>`.
    Ec2Query,
    /// JSON with `X-Amz-Target` (DynamoDB): `{"__type": "…#Code", "message": …}`.
    AwsJson1_0,
}

/// A service of the cloud: the generic JSON API or an AWS service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Service {
    /// The generic JSON API under `/v1/accounts/…` (bearer tokens).
    Generic,
    /// Amazon S3.
    S3,
    /// AWS Security Token Service.
    Sts,
    /// Amazon DynamoDB.
    DynamoDb,
    /// Amazon EC2 (its VPCs and tags).
    Ec2,
}

/// Everything the cloud knows of one service, in one row of [`ROWS`].
struct Row {
    /// The name in the journal, the metrics and the config.
    name: &'static str,
    /// The service name in SigV4 credential scopes (AWS services only).
    signing_name: Option<&'static str>,
    /// The wire protocol (AWS services only).
    protocol: Option<Protocol>,
    /// The operations, named as on the wire, in journal-number order.
    operations: &'static [&'static str],
    /// The quota classes; a service's `route` puts each request in one.
    classes: &'static [&'static str],
    /// awsQuery and ec2Query: the `xmlns` of answers (and of awsQuery's error documents);
    /// empty for the others.
    xml_namespace: &'static str,
    /// awsJson: the prefix of an error's `__type` (`com.amazonaws.dynamodb.v20120810`), if
    /// the service writes one.
    json_type_prefix: Option<&'static str>,
}

/// One row per service, in the order of [`Service::ALL`] (a test checks it).
const ROWS: [Row; 5] = [
    Row {
        name: "generic",
        signing_name: None,
        protocol: None,
        operations: GENERIC_OPERATIONS,
        classes: &["read", "list", "mutate", "delete"],
        xml_namespace: "",
        json_type_prefix: None,
    },
    Row {
        name: "s3",
        signing_name: Some("s3"),
        protocol: Some(Protocol::RestXml),
        operations: S3Operation::NAMES,
        // S3's per-prefix request rates: GET and HEAD, and PUT, POST and DELETE.
        classes: &["read", "write"],
        xml_namespace: "",
        json_type_prefix: None,
    },
    Row {
        name: "sts",
        signing_name: Some("sts"),
        protocol: Some(Protocol::AwsQuery),
        operations: StsOperation::NAMES,
        classes: &["auth"],
        xml_namespace: "https://sts.amazonaws.com/doc/2011-06-15/",
        json_type_prefix: None,
    },
    Row {
        name: "dynamodb",
        signing_name: Some("dynamodb"),
        protocol: Some(Protocol::AwsJson1_0),
        operations: DynamoDbOperation::NAMES,
        // Describing and listing; creating, deleting and tagging.
        classes: &["read", "write"],
        xml_namespace: "",
        json_type_prefix: Some("com.amazonaws.dynamodb.v20120810"),
    },
    Row {
        name: "ec2",
        signing_name: Some("ec2"),
        protocol: Some(Protocol::Ec2Query),
        operations: Ec2Operation::NAMES,
        // EC2's request-token categories (cloud.md §1.1); CreateTags and DeleteTags are
        // uncategorized, each with its own bucket.
        classes: &["non-mutating", "mutating", "uncategorized"],
        xml_namespace: "http://ec2.amazonaws.com/doc/2016-11-15/",
        json_type_prefix: None,
    },
];

impl Service {
    /// Every service, in journal-number order.
    pub const ALL: [Service; 5] = [
        Service::Generic,
        Service::S3,
        Service::Sts,
        Service::DynamoDb,
        Service::Ec2,
    ];

    fn row(self) -> &'static Row {
        &ROWS[self as usize]
    }

    /// The name in the journal, the metrics and the config: `generic`, `s3`, `sts`.
    pub fn as_str(self) -> &'static str {
        self.row().name
    }

    /// Parses a service name.
    pub fn parse(name: &str) -> Option<Service> {
        Service::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// The service of a SigV4 credential scope's service name.
    pub fn from_signing_name(name: &str) -> Option<Service> {
        Service::ALL
            .into_iter()
            .find(|s| s.signing_name() == Some(name))
    }

    /// The name in SigV4 credential scopes, for AWS services.
    pub fn signing_name(self) -> Option<&'static str> {
        self.row().signing_name
    }

    /// The wire protocol, for AWS services.
    pub fn protocol(self) -> Option<Protocol> {
        self.row().protocol
    }

    /// The operations, named as on the wire (the generic API's are its actions).
    pub fn operations(self) -> &'static [&'static str] {
        self.row().operations
    }

    /// The quota classes: operations of a class share its buckets. The generic API's are
    /// [`crate::Class`]'s; S3's are `read` (GET, HEAD) and `write` (PUT, POST, DELETE), as
    /// S3's per-prefix request rates are; STS has one, `auth`; DynamoDB's are `read`
    /// (DescribeTable, ListTables, ListTagsOfResource) and `write` (CreateTable,
    /// DeleteTable, TagResource, UntagResource); EC2's are its request-token categories,
    /// `non-mutating`, `mutating` and `uncategorized`.
    pub fn classes(self) -> &'static [&'static str] {
        self.row().classes
    }

    /// The XML namespace of a query service's answers and (awsQuery) error documents.
    pub(crate) fn xml_namespace(self) -> &'static str {
        self.row().xml_namespace
    }

    /// The prefix of a JSON error's `__type`, if the service writes one.
    pub(crate) fn json_type_prefix(self) -> Option<&'static str> {
        self.row().json_type_prefix
    }

    /// The operation of this wire name.
    pub fn operation(self, name: &str) -> Option<Operation> {
        let index = self.operations().iter().position(|n| *n == name)?;
        Some(Operation::new(self, u8::try_from(index).ok()?))
    }

    /// The class of this name.
    pub fn class(self, name: &str) -> Option<u8> {
        let index = self.classes().iter().position(|n| *n == name)?;
        u8::try_from(index).ok()
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Service {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Service {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Service {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Service, D::Error> {
        let name = String::deserialize(d)?;
        Service::parse(&name).ok_or_else(|| {
            serde::de::Error::unknown_variant(&name, &["generic", "s3", "sts", "dynamodb", "ec2"])
        })
    }
}

/// One operation of one service, in two bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Operation {
    service: Service,
    index: u8,
}

impl Operation {
    pub(crate) const fn new(service: Service, index: u8) -> Operation {
        Operation { service, index }
    }

    /// The service.
    pub fn service(self) -> Service {
        self.service
    }

    /// The wire name, such as `HeadBucket`.
    pub fn name(self) -> &'static str {
        self.service
            .operations()
            .get(usize::from(self.index))
            .copied()
            .unwrap_or("")
    }

    pub(crate) fn index(self) -> u8 {
        self.index
    }

    /// The operation stored as `(service, index)`, if both are in the catalog.
    pub(crate) fn from_parts(service: u8, index: u8) -> Option<Operation> {
        let service = *Service::ALL.get(usize::from(service))?;
        (usize::from(index) < service.operations().len()).then_some(Operation { service, index })
    }
}

impl From<S3Operation> for Operation {
    fn from(op: S3Operation) -> Operation {
        Operation::new(Service::S3, op as u8)
    }
}

impl From<StsOperation> for Operation {
    fn from(op: StsOperation) -> Operation {
        Operation::new(Service::Sts, op as u8)
    }
}

impl From<DynamoDbOperation> for Operation {
    fn from(op: DynamoDbOperation) -> Operation {
        Operation::new(Service::DynamoDb, op as u8)
    }
}

impl From<Ec2Operation> for Operation {
    fn from(op: Ec2Operation) -> Operation {
        Operation::new(Service::Ec2, op as u8)
    }
}

impl From<crate::model::Action> for Operation {
    fn from(action: crate::model::Action) -> Operation {
        Operation::new(Service::Generic, action.index() as u8)
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.service, self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Action;

    #[test]
    fn every_operation_round_trips_through_its_name_and_its_two_bytes() {
        for service in Service::ALL {
            assert!(service.operations().len() < 256, "{service}");
            assert_eq!(Service::parse(service.as_str()), Some(service));
            for name in service.operations() {
                let op = service.operation(name).unwrap();
                assert_eq!(op.name(), *name);
                assert_eq!(
                    Operation::from_parts(service.index() as u8, op.index()),
                    Some(op)
                );
            }
        }
        assert_eq!(
            Operation::from(S3Operation::HeadBucket).name(),
            "HeadBucket"
        );
        assert_eq!(Operation::from(Action::List).name(), "list");
        assert_eq!(
            S3Operation::parse("GetBucketCors"),
            Some(S3Operation::GetBucketCors)
        );
    }

    #[test]
    fn every_service_has_its_own_row() {
        for (i, service) in Service::ALL.into_iter().enumerate() {
            assert_eq!(service.index(), i);
            assert_eq!(ROWS[i].name, service.as_str());
            assert!(!service.classes().is_empty(), "{service}");
            // An AWS service has a signing name and a protocol; the generic API neither.
            assert_eq!(
                service.signing_name().is_some(),
                service.protocol().is_some()
            );
        }
    }

    #[test]
    fn signing_names_find_their_service_and_the_generic_api_has_none() {
        assert_eq!(Service::from_signing_name("s3"), Some(Service::S3));
        assert_eq!(Service::from_signing_name("sts"), Some(Service::Sts));
        assert_eq!(
            Service::from_signing_name("dynamodb"),
            Some(Service::DynamoDb)
        );
        assert_eq!(Service::from_signing_name("ec2"), Some(Service::Ec2));
        assert_eq!(Service::from_signing_name("generic"), None);
        assert_eq!(
            Service::Generic.classes(),
            crate::model::Class::ALL.map(crate::model::Class::as_str)
        );
    }
}
