//! The DynamoDB `Table` external client (provider-upjet-aws's `Table` on Terraform's
//! `aws_dynamodb_table`, as far as mock-cloud's DynamoDB speaks it: no continuous backups or
//! TTL reads, so the read is two calls).
//!
//! | path | DynamoDB calls |
//! |---|---|
//! | observe, absent | 1: DescribeTable (`ResourceNotFoundException`) |
//! | observe, present | 2: DescribeTable, ListTagsOfResource |
//! | create | 1: CreateTable with the tags |
//! | update | 1 TagResource if tags are added or changed + 1 UntagResource if tags are removed |
//! | delete | 1: DeleteTable |

use std::collections::BTreeMap;

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, KeySchemaElement, KeyType, ScalarAttributeType, Tag,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::AwsError;

/// `spec.forProvider` of a Table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TableParameters {
    /// The region.
    pub region: String,
    /// `PAY_PER_REQUEST` (this client's only mode for now) or `PROVISIONED`.
    pub billing_mode: String,
    /// Key attributes: name and type (`S`, `N`, `B`).
    pub attribute: Vec<TableAttribute>,
    /// The partition key's attribute.
    pub hash_key: String,
    /// The sort key's attribute, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_key: Option<String>,
    /// Tags.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
}

/// One `attribute` block.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TableAttribute {
    /// Name.
    pub name: String,
    /// `S`, `N` or `B`.
    #[serde(rename = "type")]
    pub kind: String,
}

/// `status.atProvider` of a Table.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TableObservation {
    /// The table's ARN.
    pub arn: String,
    /// `CREATING`, `ACTIVE`, `DELETING`, …
    pub status: String,
    /// The billing mode DynamoDB reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billing_mode: Option<String>,
    /// Tags.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

impl TableObservation {
    /// Whether the table matches `spec` (tags; key schema and attributes cannot change).
    #[must_use]
    pub fn up_to_date(&self, spec: &TableParameters) -> bool {
        self.tags == spec.tags
    }

    /// Whether the table can be used (and tagged): `ACTIVE`.
    #[must_use]
    pub fn ready(&self) -> bool {
        self.status == "ACTIVE"
    }
}

fn build_error(operation: &'static str, e: aws_sdk_dynamodb::error::BuildError) -> AwsError {
    AwsError::other("DynamoDB", operation, e)
}

fn tags(operation: &'static str, map: &BTreeMap<String, String>) -> Result<Vec<Tag>, AwsError> {
    map.iter()
        .map(|(k, v)| Tag::builder().key(k).value(v).build())
        .collect::<Result<_, _>>()
        .map_err(|e| build_error(operation, e))
}

/// Observe: DescribeTable, then ListTagsOfResource; `None` when the table does not exist.
///
/// # Errors
/// Any other DynamoDB error.
pub async fn observe(
    db: &aws_sdk_dynamodb::Client,
    name: &str,
) -> Result<Option<TableObservation>, AwsError> {
    let out = match db.describe_table().table_name(name).send().await {
        Ok(out) => out,
        Err(e) if e.code() == Some("ResourceNotFoundException") => return Ok(None),
        Err(e) => return Err(AwsError::sdk("DynamoDB", "DescribeTable", e)),
    };
    let Some(t) = out.table() else {
        return Ok(None);
    };
    let arn = t.table_arn().unwrap_or_default().to_owned();
    let tags = db
        .list_tags_of_resource()
        .resource_arn(&arn)
        .send()
        .await
        .map_err(|e| AwsError::sdk("DynamoDB", "ListTagsOfResource", e))?
        .tags()
        .iter()
        .map(|t| (t.key().to_owned(), t.value().to_owned()))
        .collect();
    Ok(Some(TableObservation {
        arn,
        status: t
            .table_status()
            .map(|s| s.as_str().to_owned())
            .unwrap_or_default(),
        billing_mode: t
            .billing_mode_summary()
            .and_then(|b| b.billing_mode())
            .map(|m| m.as_str().to_owned()),
        tags,
    }))
}

/// Create: CreateTable with the key schema, attributes and tags.
///
/// # Errors
/// The DynamoDB error, or a spec the SDK cannot build.
pub async fn create(
    db: &aws_sdk_dynamodb::Client,
    name: &str,
    spec: &TableParameters,
) -> Result<(), AwsError> {
    const OP: &str = "CreateTable";
    let attributes = spec
        .attribute
        .iter()
        .map(|a| {
            AttributeDefinition::builder()
                .attribute_name(&a.name)
                .attribute_type(ScalarAttributeType::from(a.kind.as_str()))
                .build()
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| build_error(OP, e))?;
    let mut keys = vec![
        KeySchemaElement::builder()
            .attribute_name(&spec.hash_key)
            .key_type(KeyType::Hash)
            .build()
            .map_err(|e| build_error(OP, e))?,
    ];
    if let Some(r) = &spec.range_key {
        keys.push(
            KeySchemaElement::builder()
                .attribute_name(r)
                .key_type(KeyType::Range)
                .build()
                .map_err(|e| build_error(OP, e))?,
        );
    }
    let mut req = db
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::from(spec.billing_mode.as_str()))
        .set_attribute_definitions(Some(attributes))
        .set_key_schema(Some(keys));
    if !spec.tags.is_empty() {
        req = req.set_tags(Some(tags(OP, &spec.tags)?));
    }
    req.send()
        .await
        .map_err(|e| AwsError::sdk("DynamoDB", OP, e))?;
    Ok(())
}

/// Update: TagResource for added or changed tags, UntagResource for removed ones.
///
/// # Errors
/// The first DynamoDB error (`ResourceInUseException` while the table is not `ACTIVE`).
pub async fn update(
    db: &aws_sdk_dynamodb::Client,
    spec: &TableParameters,
    observed: &TableObservation,
) -> Result<(), AwsError> {
    let (changed, removed) = super::tag_changes(&spec.tags, &observed.tags);
    if !changed.is_empty() {
        db.tag_resource()
            .resource_arn(&observed.arn)
            .set_tags(Some(tags("TagResource", &changed)?))
            .send()
            .await
            .map_err(|e| AwsError::sdk("DynamoDB", "TagResource", e))?;
    }
    if !removed.is_empty() {
        db.untag_resource()
            .resource_arn(&observed.arn)
            .set_tag_keys(Some(removed))
            .send()
            .await
            .map_err(|e| AwsError::sdk("DynamoDB", "UntagResource", e))?;
    }
    Ok(())
}

/// Delete: DeleteTable. A table already gone is success.
///
/// # Errors
/// Any other DynamoDB error.
pub async fn delete(db: &aws_sdk_dynamodb::Client, name: &str) -> Result<(), AwsError> {
    match db.delete_table().table_name(name).send().await {
        Ok(_) => Ok(()),
        Err(e) if e.code() == Some("ResourceNotFoundException") => Ok(()),
        Err(e) => Err(AwsError::sdk("DynamoDB", "DeleteTable", e)),
    }
}
