//! The EC2 `VPC` external client (provider-upjet-aws's `VPC` on Terraform's `aws_vpc`, as far
//! as mock-cloud's EC2 speaks it: it has no DescribeVpcAttribute, so the read is one call).
//!
//! | path | EC2 calls |
//! |---|---|
//! | observe | 1: DescribeVpcs by ID (`InvalidVpcID.NotFound`: absent) |
//! | create | 1: CreateVpc with the tags in its TagSpecifications |
//! | update | 1 CreateTags if tags are added or changed + 1 DeleteTags if tags are removed |
//! | delete | 1: DeleteVpc |

use std::collections::BTreeMap;

use aws_sdk_ec2::error::ProvideErrorMetadata;
use aws_sdk_ec2::types::{ResourceType, Tag, TagSpecification};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::AwsError;

/// `spec.forProvider` of a VPC.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VpcParameters {
    /// The region.
    pub region: String,
    /// The IPv4 CIDR block (`CidrBlock`), immutable.
    pub cidr_block: String,
    /// Tags.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
}

/// `status.atProvider` of a VPC.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VpcObservation {
    /// `vpc-…`.
    pub id: String,
    /// The CIDR block.
    pub cidr_block: String,
    /// `pending` or `available`.
    pub state: String,
    /// The owning account.
    pub owner_id: String,
    /// Tags.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

impl VpcObservation {
    /// Whether the VPC matches `spec` (tags; the CIDR block cannot change).
    #[must_use]
    pub fn up_to_date(&self, spec: &VpcParameters) -> bool {
        self.tags == spec.tags
    }
}

fn tags(map: &BTreeMap<String, String>) -> Vec<Tag> {
    map.iter()
        .map(|(k, v)| Tag::builder().key(k).value(v).build())
        .collect()
}

/// Observe: DescribeVpcs of `id`; `None` when EC2 does not know it.
///
/// # Errors
/// Any other EC2 error.
pub async fn observe(
    ec2: &aws_sdk_ec2::Client,
    id: &str,
) -> Result<Option<VpcObservation>, AwsError> {
    let out = match ec2.describe_vpcs().vpc_ids(id).send().await {
        Ok(out) => out,
        Err(e) if e.code() == Some("InvalidVpcID.NotFound") => return Ok(None),
        Err(e) => return Err(AwsError::sdk("EC2", "DescribeVpcs", e)),
    };
    Ok(out.vpcs().first().map(|v| VpcObservation {
        id: v.vpc_id().unwrap_or(id).to_owned(),
        cidr_block: v.cidr_block().unwrap_or_default().to_owned(),
        state: v.state().map(|s| s.as_str().to_owned()).unwrap_or_default(),
        owner_id: v.owner_id().unwrap_or_default().to_owned(),
        tags: v
            .tags()
            .iter()
            .filter_map(|t| {
                Some((
                    t.key()?.to_owned(),
                    t.value().unwrap_or_default().to_owned(),
                ))
            })
            .collect(),
    }))
}

/// Create: CreateVpc with the tags; returns the new VPC's ID (the external name).
///
/// # Errors
/// The EC2 error.
pub async fn create(ec2: &aws_sdk_ec2::Client, spec: &VpcParameters) -> Result<String, AwsError> {
    let mut req = ec2.create_vpc().cidr_block(&spec.cidr_block);
    if !spec.tags.is_empty() {
        req = req.tag_specifications(
            TagSpecification::builder()
                .resource_type(ResourceType::Vpc)
                .set_tags(Some(tags(&spec.tags)))
                .build(),
        );
    }
    let out = req
        .send()
        .await
        .map_err(|e| AwsError::sdk("EC2", "CreateVpc", e))?;
    out.vpc()
        .and_then(|v| v.vpc_id())
        .map(str::to_owned)
        .ok_or_else(|| AwsError::other("EC2", "CreateVpc", "the answer carried no VPC ID"))
}

/// Update: CreateTags for added or changed tags, DeleteTags for removed ones.
///
/// # Errors
/// The first EC2 error.
pub async fn update(
    ec2: &aws_sdk_ec2::Client,
    spec: &VpcParameters,
    observed: &VpcObservation,
) -> Result<(), AwsError> {
    let (changed, removed) = super::tag_changes(&spec.tags, &observed.tags);
    let removed: Vec<Tag> = removed
        .iter()
        .map(|k| Tag::builder().key(k).build())
        .collect();
    if !changed.is_empty() {
        ec2.create_tags()
            .resources(&observed.id)
            .set_tags(Some(tags(&changed)))
            .send()
            .await
            .map_err(|e| AwsError::sdk("EC2", "CreateTags", e))?;
    }
    if !removed.is_empty() {
        ec2.delete_tags()
            .resources(&observed.id)
            .set_tags(Some(removed))
            .send()
            .await
            .map_err(|e| AwsError::sdk("EC2", "DeleteTags", e))?;
    }
    Ok(())
}

/// Delete: DeleteVpc. A VPC already gone is success.
///
/// # Errors
/// Any other EC2 error.
pub async fn delete(ec2: &aws_sdk_ec2::Client, id: &str) -> Result<(), AwsError> {
    match ec2.delete_vpc().vpc_id(id).send().await {
        Ok(_) => Ok(()),
        Err(e) if e.code() == Some("InvalidVpcID.NotFound") => Ok(()),
        Err(e) => Err(AwsError::sdk("EC2", "DeleteVpc", e)),
    }
}
