//! Per-resource faults on the AWS front ends: the rules of the generic API
//! ([`crate::ResourceFault`], decided by [`crate::resource_faults::decide`]), applied to the
//! resource an operation names, answered with each service's own codes and states.
//!
//! # Semantics
//! The resource of an operation is its bucket (S3, an object operation's too), its table
//! (DynamoDB, by `TableName` or the table of `ResourceArn`) or its VPC (EC2: the `VpcId` of
//! DeleteVpc and ModifyVpcAttribute, `ResourceId.1` of CreateTags and DeleteTags, the one
//! `VpcId.1` of a DescribeVpcs that names exactly one, and for CreateVpc the ID the new VPC
//! gets, reserved before the rules are read). An operation that names none (ListBuckets,
//! ListTables, a DescribeVpcs by filter or of several VPCs, DescribeTags, every STS call)
//! is never faulted per resource.
//!
//! Rules select as on the generic API:
//! - `collection`: `s3/buckets`, `dynamodb/tables`, `ec2/vpcs` select that front end's
//!   resources; a generic collection (`buckets`, `databases`, `records`) selects none here.
//! - `name` (the bucket, the table name, the VPC ID) and `percent` (a hash of the seed and
//!   that name).
//! - `tag`: the resource's tags, read as the generic API reads `spec.tags`. A create is
//!   selected by the tags it asks for (S3's `CreateBucketConfiguration` `<Tags>`,
//!   DynamoDB's `Tags`, EC2's `TagSpecifications` of type `vpc`); any other operation by
//!   the tags stored when it arrives (after PutBucketTagging, TagResource, CreateTags and
//!   their deletes), as an update on the generic API is selected by the spec it replaces.
//!
//! Operations count as the generic actions: create (CreateBucket, CreateTable, CreateVpc),
//! get (HeadBucket, GetBucket\*, GetObject, HeadObject, DescribeTable, ListTagsOfResource,
//! DescribeVpcs), update (PutBucket\*, DeleteBucket\<subresource\>, PutObject,
//! DeleteObject, TagResource, UntagResource, ModifyVpcAttribute, CreateTags, DeleteTags) and
//! delete (DeleteBucket, DeleteTable, DeleteVpc).
//!
//! A lasting error answers as the service does (codes from botocore's service models and
//! the services' error references; a rule's `code` replaces the code, not the status):
//!
//! | error | S3 | DynamoDB | EC2 |
//! |---|---|---|---|
//! | AccessDenied | 403 `AccessDenied` | 400 `AccessDeniedException` | 403 `UnauthorizedOperation` |
//! | Conflict | 409 `BucketAlreadyExists` | 400 `ResourceInUseException` | 400 `DependencyViolation` |
//! | Validation | 400 `InvalidArgument` | 400 `ValidationException` | 400 `InvalidParameterValue` |
//!
//! EC2's VPCs have no unique name to conflict over and CreateVpc has no conflict error, so
//! a Conflict never fails CreateVpc (with `actions: [delete]` it fails DeleteVpc, as
//! `DependencyViolation` does).
//!
//! A retry hint rides on the error as `Retry-After` (whole seconds, rounded up) and
//! `x-amz-retry-after` (milliseconds), whatever `aws.retry_after_header` says (that
//! setting is for throttles).
//!
//! NotFound after a create: a read (a get above) of a resource younger than the rule's
//! duration answers the service's own not-found, as a read of a missing resource does: S3
//! 404 `NoSuchBucket` (HeadBucket and HeadObject: the status alone, no body), DynamoDB 400
//! `ResourceNotFoundException` (DescribeTable: "Table: … not found"; ListTagsOfResource:
//! "ResourceArn: … not found"), EC2 400 `InvalidVpcID.NotFound`. The age is counted from the
//! resource's creation on the cloud's clock; updates and deletes are not affected, as on the
//! generic API, and the journal does not mark these answers as faults (the generic API's
//! 404s are not marked either).
//!
//! A slow create keeps the resource in its service's creating state for the rule's
//! duration: a DynamoDB table `CREATING` (the longer of it and
//! `provisioning.database_create_ms`; tagging or deleting it meanwhile is
//! `ResourceInUseException`), an EC2 VPC `pending` in DescribeVpcs (and its `state`
//! filter). S3 has no creating state: a bucket exists once CreateBucket answers, and S3
//! reports no state to wait on, so a slow create selects no bucket (and a rule naming
//! `collection: s3/buckets` is refused when the faults are set). A bucket that reads as
//! absent for a while is NotFound after a create.
//!
//! Drift changes the tags a read reports (GetBucketTagging, ListTagsOfResource,
//! DescribeVpcs), since tags are what the AWS kinds compare: the drift field is a tag key
//! whose value reads `<value>-drifted` (`drifted` if the tag is absent); without a field, an
//! extra tag `drift=drifted`.

use std::collections::BTreeMap;

use http::StatusCode;
use jiff::Timestamp;

use super::contract::{AwsRequest, Routed};
use super::envelope::AwsError;
use super::xml::Element;
use crate::config::{LastingError, ResourceKind};
use crate::model::Action;
use crate::service::{DynamoDbOperation, Ec2Operation, S3Operation, Service};

/// What a service tells the per-resource rules of the resource an operation names.
#[derive(Debug, Default)]
pub(crate) struct Facts {
    /// Its tags, when a rule selects by tag: a create's as it asks for them, otherwise
    /// those stored (`None`: the resource does not exist).
    pub tags: Option<BTreeMap<String, String>>,
    /// When it was created, if it exists.
    pub created: Option<Timestamp>,
    /// The service's not-found answer to this operation, for a read of a resource that
    /// exists.
    pub not_found: Option<AwsError>,
    /// EC2's CreateVpc: the ID reserved for the new VPC (the name the rules select).
    pub new_id: Option<String>,
}

/// The kind a service's resources have in rules' `collection`.
pub(crate) fn kind(service: Service) -> Option<ResourceKind> {
    match service {
        Service::S3 => Some(ResourceKind::S3Buckets),
        Service::DynamoDb => Some(ResourceKind::DynamoDbTables),
        Service::Ec2 => Some(ResourceKind::Ec2Vpcs),
        Service::Sts | Service::Generic => None,
    }
}

/// The resource an operation names and the action it counts as; `None`: not faulted per
/// resource. The name is empty for CreateVpc, whose VPC has no ID yet (its [`Facts`]
/// reserve one).
pub(crate) fn subject(request: &AwsRequest<'_>, routed: &Routed) -> Option<(String, Action)> {
    let (name, action) = match request.service {
        Service::S3 => {
            let op = S3Operation::of(routed.op)?;
            let bucket = routed.name.split('/').next().unwrap_or_default();
            (bucket.to_owned(), s3_action(op)?)
        }
        Service::DynamoDb => {
            let op = DynamoDbOperation::of(routed.op)?;
            (routed.resource.clone(), dynamodb_action(op)?)
        }
        Service::Ec2 => {
            let op = Ec2Operation::of(routed.op)?;
            // DescribeVpcs names its VPC when it reads exactly one.
            let name = match op {
                Ec2Operation::CreateVpc => return Some((String::new(), Action::Create)),
                _ => routed.name.clone(),
            };
            (name, ec2_action(op)?)
        }
        Service::Sts | Service::Generic => return None,
    };
    (!name.is_empty()).then_some((name, action))
}

/// Whether a lasting error applies on `service` to `action`: every one does, except a
/// Conflict on EC2's CreateVpc (VPCs have no unique name to conflict over).
pub(crate) fn applies(service: Service, error: LastingError, action: Action) -> bool {
    !(service == Service::Ec2 && error == LastingError::Conflict && action == Action::Create)
}

/// Tags as `{"tags": {…}}`, the shape the rules' tag selector reads.
pub(crate) fn tags_as_spec(tags: &BTreeMap<String, String>) -> serde_json::Value {
    serde_json::json!({ "tags": tags })
}

fn s3_action(op: S3Operation) -> Option<Action> {
    use S3Operation as Op;
    Some(match op {
        Op::ListBuckets => return None,
        Op::CreateBucket => Action::Create,
        Op::DeleteBucket => Action::Delete,
        Op::HeadBucket | Op::GetObject | Op::HeadObject => Action::Get,
        Op::PutObject | Op::DeleteObject => Action::Update,
        op if op.name().starts_with("Get") => Action::Get,
        _ => Action::Update,
    })
}

fn dynamodb_action(op: DynamoDbOperation) -> Option<Action> {
    use DynamoDbOperation as Op;
    Some(match op {
        Op::ListTables => return None,
        Op::CreateTable => Action::Create,
        Op::DescribeTable | Op::ListTagsOfResource => Action::Get,
        Op::TagResource | Op::UntagResource => Action::Update,
        Op::DeleteTable => Action::Delete,
    })
}

fn ec2_action(op: Ec2Operation) -> Option<Action> {
    use Ec2Operation as Op;
    Some(match op {
        Op::CreateVpc => Action::Create,
        Op::DescribeVpcs | Op::DescribeTags => Action::Get,
        Op::ModifyVpcAttribute | Op::CreateTags | Op::DeleteTags => Action::Update,
        Op::DeleteVpc => Action::Delete,
    })
}

/// The answer of a lasting error on `service` for the resource `name`, with the rule's
/// `code` if it names one and the retry hint if there is one.
pub(crate) fn lasting_error(
    service: Service,
    error: LastingError,
    code: Option<&str>,
    name: &str,
    hint: Option<std::time::Duration>,
) -> AwsError {
    use LastingError as E;
    let (status, default, message) = match (service, error) {
        (Service::S3, E::AccessDenied) => (StatusCode::FORBIDDEN, "AccessDenied", "Access Denied".to_owned()),
        (Service::S3, E::Conflict) => (
            StatusCode::CONFLICT,
            "BucketAlreadyExists",
            "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.".to_owned(),
        ),
        (Service::S3, E::Validation) => (StatusCode::BAD_REQUEST, "InvalidArgument", "Invalid Argument".to_owned()),
        (Service::Ec2, E::AccessDenied) => (
            StatusCode::FORBIDDEN,
            "UnauthorizedOperation",
            "You are not authorized to perform this operation.".to_owned(),
        ),
        (Service::Ec2, E::Conflict) => (
            StatusCode::BAD_REQUEST,
            "DependencyViolation",
            format!("The vpc '{name}' has dependencies and cannot be deleted."),
        ),
        (Service::Ec2, E::Validation) => (
            StatusCode::BAD_REQUEST,
            "InvalidParameterValue",
            "The cloud refuses a parameter of this resource on purpose.".to_owned(),
        ),
        (_, E::AccessDenied) => (
            StatusCode::BAD_REQUEST,
            "AccessDeniedException",
            format!("User is not authorized to perform this operation on resource: {name}"),
        ),
        (_, E::Conflict) => (
            StatusCode::BAD_REQUEST,
            "ResourceInUseException",
            format!("Table already exists: {name}"),
        ),
        (_, E::Validation) => (
            StatusCode::BAD_REQUEST,
            "ValidationException",
            "The cloud refuses a parameter of this resource on purpose.".to_owned(),
        ),
    };
    let mut err = AwsError::new(status, code.unwrap_or(default).to_owned(), message);
    if service == Service::S3 && error == E::Conflict {
        err = err.with_field("BucketName", name);
    }
    err.hint = hint;
    err
}

/// The `<Tag><Key/><Value/></Tag>`s of an S3 `<TagSet>` (or CreateBucket's `<Tags>`).
pub(crate) fn tag_set(set: Option<&Element>) -> BTreeMap<String, String> {
    set.into_iter()
        .flat_map(|set| set.all("Tag"))
        .map(|t| {
            (
                t.text_of("Key").unwrap_or_default().to_owned(),
                t.text_of("Value").unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// `tags` as a drifted read reports them.
pub(crate) fn drift_tags(tags: &mut BTreeMap<String, String>, field: Option<&str>) {
    let key = field.unwrap_or("drift");
    let drifted = tags
        .get(key)
        .map_or_else(|| "drifted".to_owned(), |v| format!("{v}-drifted"));
    tags.insert(key.to_owned(), drifted);
}

/// An S3 `<Tagging>` document as a drifted read reports it (a `<TagSet>` is added if it
/// has none).
pub(crate) fn drift_tagging(tagging: &Element, field: Option<&str>) -> Element {
    let mut out = tagging.clone();
    let set = match out.children.iter().position(|c| c.name == "TagSet") {
        Some(i) => &mut out.children[i],
        None => {
            out.children.push(element("TagSet", "", Vec::new()));
            out.children
                .last_mut()
                .unwrap_or_else(|| unreachable!("just pushed"))
        }
    };
    let mut tags = tag_set(Some(set));
    drift_tags(&mut tags, field);
    set.children = tags
        .into_iter()
        .map(|(k, v)| {
            element(
                "Tag",
                "",
                vec![
                    element("Key", &k, Vec::new()),
                    element("Value", &v, Vec::new()),
                ],
            )
        })
        .collect();
    out
}

fn element(name: &str, text: &str, children: Vec<Element>) -> Element {
    Element {
        name: name.to_owned(),
        text: text.to_owned(),
        children,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_count_as_the_generic_actions() {
        assert_eq!(s3_action(S3Operation::CreateBucket), Some(Action::Create));
        assert_eq!(s3_action(S3Operation::GetBucketTagging), Some(Action::Get));
        assert_eq!(
            s3_action(S3Operation::PutBucketTagging),
            Some(Action::Update)
        );
        assert_eq!(
            s3_action(S3Operation::DeleteBucketTagging),
            Some(Action::Update)
        );
        assert_eq!(s3_action(S3Operation::DeleteBucket), Some(Action::Delete));
        assert_eq!(s3_action(S3Operation::ListBuckets), None);
        assert_eq!(
            dynamodb_action(DynamoDbOperation::ListTagsOfResource),
            Some(Action::Get)
        );
        assert_eq!(ec2_action(Ec2Operation::CreateTags), Some(Action::Update));
        assert_eq!(ec2_action(Ec2Operation::CreateVpc), Some(Action::Create));
        assert!(!applies(
            Service::Ec2,
            LastingError::Conflict,
            Action::Create
        ));
        assert!(applies(
            Service::Ec2,
            LastingError::Conflict,
            Action::Delete
        ));
        assert!(applies(Service::S3, LastingError::Conflict, Action::Create));
    }

    #[test]
    fn a_drifted_tag_set_always_differs_from_the_one_written() {
        let mut tags = BTreeMap::from([("team".to_owned(), "red".to_owned())]);
        drift_tags(&mut tags, Some("team"));
        assert_eq!(tags["team"], "red-drifted");
        drift_tags(&mut tags, None);
        assert_eq!(tags["drift"], "drifted");
        let doc = super::super::xml::parse(
            b"<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag></TagSet></Tagging>",
        )
        .unwrap();
        let drifted = drift_tagging(&doc, Some("a"));
        let set = drifted.child("TagSet").unwrap();
        let values: Vec<_> = set
            .all("Tag")
            .map(|t| t.text_of("Value").unwrap())
            .collect();
        assert_eq!(values, ["1-drifted"]);
    }
}
