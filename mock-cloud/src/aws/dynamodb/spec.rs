//! A CreateTable request, read and checked as DynamoDB checks it: first the members'
//! constraints (one `ValidationException` listing them), then the schema's rules ("One or
//! more parameter values were invalid: …").

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::super::envelope::AwsError;
use super::json::{self, Violations, invalid};
pub(crate) use super::model::{Billing, Index, KeySchema, TableSpec};

const KEY_TYPES: &[&str] = &["HASH", "RANGE"];
const ATTRIBUTE_TYPES: &[&str] = &["S", "N", "B"];
const PROJECTIONS: &[&str] = &["ALL", "KEYS_ONLY", "INCLUDE"];
const BILLING_MODES: &[&str] = &["PROVISIONED", "PAY_PER_REQUEST"];
const VIEW_TYPES: &[&str] = &["NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES", "KEYS_ONLY"];
const TABLE_CLASSES: &[&str] = &["STANDARD", "STANDARD_INFREQUENT_ACCESS"];

/// Reads tags (`Tags` of CreateTable and TagResource), checking each key's and value's
/// length.
pub(crate) fn tags(
    map: &Map<String, Value>,
    key: &str,
    path: &str,
    v: &mut Violations,
) -> Result<Option<Vec<(String, String)>>, AwsError> {
    let Some(items) = json::structures(map, key)? else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, tag) in items.iter().enumerate() {
        let at = format!("{path}.{}.member", i + 1);
        let k = json::string(tag, "Key")?;
        let value = json::string(tag, "Value")?;
        match k {
            None => v.null(&format!("{at}.key")),
            Some(k) => v.length(&format!("{at}.key"), k, 1, 128),
        }
        match value {
            None => v.null(&format!("{at}.value")),
            Some(value) => v.length(&format!("{at}.value"), value, 0, 256),
        }
        out.push((
            k.unwrap_or_default().to_owned(),
            value.unwrap_or_default().to_owned(),
        ));
    }
    Ok(Some(out))
}

fn key_schema(
    items: Option<Vec<&Map<String, Value>>>,
    path: &str,
    v: &mut Violations,
) -> Result<KeySchema, AwsError> {
    let Some(items) = items else {
        v.null(path);
        return Ok(KeySchema(Vec::new()));
    };
    let mut out = Vec::new();
    for (i, element) in items.iter().enumerate() {
        let at = format!("{path}.{}.member", i + 1);
        let name = json::string(element, "AttributeName")?;
        let kind = json::string(element, "KeyType")?;
        match name {
            None => v.null(&format!("{at}.attributeName")),
            Some(name) => v.length(&format!("{at}.attributeName"), name, 1, 255),
        }
        match kind {
            None => v.null(&format!("{at}.keyType")),
            Some(kind) => v.one_of(&format!("{at}.keyType"), kind, KEY_TYPES),
        }
        out.push((
            name.unwrap_or_default().to_owned(),
            kind.unwrap_or_default().to_owned(),
        ));
    }
    let shown = format!("[{}]", out.len());
    v.count(path, &shown, out.len(), 1, 2);
    Ok(KeySchema(out))
}

fn throughput(
    map: &Map<String, Value>,
    path: &str,
    v: &mut Violations,
) -> Result<Option<(i64, i64)>, AwsError> {
    let Some(pt) = json::structure(map, "ProvisionedThroughput")? else {
        return Ok(None);
    };
    let read = json::integer(pt, "ReadCapacityUnits")?;
    let write = json::integer(pt, "WriteCapacityUnits")?;
    for (value, member) in [(read, "readCapacityUnits"), (write, "writeCapacityUnits")] {
        let at = format!("{path}.{member}");
        match value {
            None => v.null(&at),
            Some(n) => v.range(&at, n, 1, i64::MAX),
        }
    }
    Ok(Some((read.unwrap_or(1), write.unwrap_or(1))))
}

fn projection(map: &Map<String, Value>, path: &str, v: &mut Violations) -> Result<Value, AwsError> {
    let Some(p) = json::structure(map, "Projection")? else {
        v.null(path);
        return Ok(Value::Null);
    };
    if let Some(kind) = json::string(p, "ProjectionType")? {
        v.one_of(&format!("{path}.projectionType"), kind, PROJECTIONS);
    }
    if let Some(names) = json::strings(p, "NonKeyAttributes")? {
        v.count(
            &format!("{path}.nonKeyAttributes"),
            &format!("{names:?}"),
            names.len(),
            1,
            20,
        );
    }
    Ok(Value::Object(p.clone()))
}

fn indexes(
    map: &Map<String, Value>,
    key: &str,
    path: &str,
    v: &mut Violations,
) -> Result<Vec<Index>, AwsError> {
    let Some(items) = json::structures(map, key)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, index) in items.iter().enumerate() {
        let at = format!("{path}.{}.member", i + 1);
        let name = json::string(index, "IndexName")?;
        match name {
            None => v.null(&format!("{at}.indexName")),
            Some(name) => v.name(&format!("{at}.indexName"), name),
        }
        let schema = key_schema(
            json::structures(index, "KeySchema")?,
            &format!("{at}.keySchema"),
            v,
        )?;
        let projection = projection(index, &format!("{at}.projection"), v)?;
        let throughput = throughput(index, &format!("{at}.provisionedThroughput"), v)?;
        out.push(Index {
            name: name.unwrap_or_default().to_owned(),
            key_schema: schema,
            projection,
            throughput,
        });
    }
    Ok(out)
}

impl TableSpec {
    /// Reads and checks a CreateTable body.
    pub fn read(map: &Map<String, Value>) -> Result<TableSpec, AwsError> {
        let mut v = Violations::default();
        let name = json::string(map, "TableName")?;
        match name {
            None => v.null("tableName"),
            Some(name) => v.name("tableName", name),
        }
        let attributes = match json::structures(map, "AttributeDefinitions")? {
            None => {
                v.null("attributeDefinitions");
                Vec::new()
            }
            Some(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, a) in items.iter().enumerate() {
                    let at = format!("attributeDefinitions.{}.member", i + 1);
                    let n = json::string(a, "AttributeName")?;
                    let t = json::string(a, "AttributeType")?;
                    match n {
                        None => v.null(&format!("{at}.attributeName")),
                        Some(n) => v.length(&format!("{at}.attributeName"), n, 1, 255),
                    }
                    match t {
                        None => v.null(&format!("{at}.attributeType")),
                        Some(t) => v.one_of(&format!("{at}.attributeType"), t, ATTRIBUTE_TYPES),
                    }
                    out.push((
                        n.unwrap_or_default().to_owned(),
                        t.unwrap_or_default().to_owned(),
                    ));
                }
                out
            }
        };
        let schema = key_schema(json::structures(map, "KeySchema")?, "keySchema", &mut v)?;
        let local_indexes = indexes(
            map,
            "LocalSecondaryIndexes",
            "localSecondaryIndexes",
            &mut v,
        )?;
        let global_indexes = indexes(
            map,
            "GlobalSecondaryIndexes",
            "globalSecondaryIndexes",
            &mut v,
        )?;
        let mode = json::string(map, "BillingMode")?;
        if let Some(mode) = mode {
            v.one_of("billingMode", mode, BILLING_MODES);
        }
        let table_throughput = throughput(map, "provisionedThroughput", &mut v)?;
        let stream = match json::structure(map, "StreamSpecification")? {
            None => None,
            Some(s) => {
                let enabled = json::boolean(s, "StreamEnabled")?;
                let view = json::string(s, "StreamViewType")?;
                if enabled.is_none() {
                    v.null("streamSpecification.streamEnabled");
                }
                if let Some(view) = view {
                    v.one_of("streamSpecification.streamViewType", view, VIEW_TYPES);
                }
                match (enabled, view) {
                    (Some(true), Some(view)) => Some(view.to_owned()),
                    (Some(true), None) => {
                        return Err(invalid(
                            "You must specify a StreamViewType when enabling a stream",
                        ));
                    }
                    _ => None,
                }
            }
        };
        let sse = match json::structure(map, "SSESpecification")? {
            Some(s) if json::boolean(s, "Enabled")? == Some(true) => {
                Some(json::string(s, "KMSMasterKeyId")?.map(str::to_owned))
            }
            _ => None,
        };
        let table_class = json::string(map, "TableClass")?;
        if let Some(class) = table_class {
            v.one_of("tableClass", class, TABLE_CLASSES);
        }
        let deletion_protection = json::boolean(map, "DeletionProtectionEnabled")?.unwrap_or(false);
        let tags = tags(map, "Tags", "tags", &mut v)?.unwrap_or_default();
        v.finish()?;

        let billing = match (mode.unwrap_or("PROVISIONED"), table_throughput) {
            ("PAY_PER_REQUEST", None) => Billing::PayPerRequest,
            ("PAY_PER_REQUEST", Some(_)) => {
                return Err(invalid(
                    "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST",
                ));
            }
            (_, Some((read, write))) => Billing::Provisioned { read, write },
            (_, None) => {
                return Err(invalid(
                    "ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED",
                ));
            }
        };
        check_key_schema(&schema)?;
        for index in local_indexes.iter().chain(&global_indexes) {
            check_key_schema(&index.key_schema)?;
        }
        for index in &global_indexes {
            match (billing, index.throughput) {
                (Billing::Provisioned { .. }, None) => {
                    return Err(invalid(format!(
                        "ProvisionedThroughput must be specified for index: {}",
                        index.name
                    )));
                }
                (Billing::PayPerRequest, Some(_)) => {
                    return Err(invalid(format!(
                        "ProvisionedThroughput should not be specified for index: {} when BillingMode is PAY_PER_REQUEST",
                        index.name
                    )));
                }
                _ => {}
            }
        }
        for index in &local_indexes {
            if index.key_schema.0.first() != schema.0.first() {
                return Err(invalid(format!(
                    "Index KeySchema does not have the same leading hash key as table KeySchema for index: {}",
                    index.name
                )));
            }
        }
        check_attributes(&attributes, &schema, &local_indexes, &global_indexes)?;
        Ok(TableSpec {
            name: name.unwrap_or_default().to_owned(),
            attributes,
            key_schema: schema,
            billing,
            local_indexes,
            global_indexes,
            stream,
            sse,
            table_class: table_class.map(str::to_owned),
            deletion_protection,
            tags,
        })
    }
}

/// One HASH key first, then at most one RANGE key.
fn check_key_schema(schema: &KeySchema) -> Result<(), AwsError> {
    let kinds: Vec<&str> = schema.0.iter().map(|(_, k)| k.as_str()).collect();
    match kinds[..] {
        ["HASH"] | ["HASH", "RANGE"] => Ok(()),
        [first, ..] if first != "HASH" => Err(json::validation(
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
        )),
        _ => Err(json::validation(
            "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type",
        )),
    }
}

/// Every key attribute is defined, and every definition is a key attribute.
fn check_attributes(
    attributes: &[(String, String)],
    schema: &KeySchema,
    local: &[Index],
    global: &[Index],
) -> Result<(), AwsError> {
    let defined: BTreeSet<&str> = attributes.iter().map(|(n, _)| n.as_str()).collect();
    let keys: BTreeSet<&str> = std::iter::once(schema)
        .chain(local.iter().chain(global).map(|i| &i.key_schema))
        .flat_map(|s| s.0.iter().map(|(n, _)| n.as_str()))
        .collect();
    let show = |set: &BTreeSet<&str>| set.iter().copied().collect::<Vec<_>>().join(", ");
    if !keys.is_subset(&defined) {
        return Err(invalid(format!(
            "Some index key attributes are not defined in AttributeDefinitions. Keys: [{}], AttributeDefinitions: [{}]",
            show(&keys),
            show(&defined)
        )));
    }
    if defined.len() != attributes.len() {
        return Err(invalid(
            "Duplicate AttributeName found in AttributeDefinitions",
        ));
    }
    if keys != defined {
        if local.is_empty() && global.is_empty() {
            return Err(invalid(
                "Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions",
            ));
        }
        return Err(invalid(format!(
            "Some AttributeDefinitions are not used. AttributeDefinitions: [{}], keys used: [{}]",
            show(&defined),
            show(&keys)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(body: &str) -> Result<TableSpec, AwsError> {
        TableSpec::read(&json::object(body.as_bytes()).unwrap())
    }

    #[test]
    fn a_table_with_a_hash_key_on_demand_is_read() {
        let spec = read(
            r#"{"TableName":"users","AttributeDefinitions":[{"AttributeName":"id","AttributeType":"S"}],
                "KeySchema":[{"AttributeName":"id","KeyType":"HASH"}],"BillingMode":"PAY_PER_REQUEST",
                "Tags":[{"Key":"team","Value":"a"}]}"#,
        )
        .unwrap();
        assert_eq!(spec.billing, Billing::PayPerRequest);
        assert_eq!(spec.tags, [("team".to_owned(), "a".to_owned())]);
        assert!(!spec.deletion_protection);
    }

    #[test]
    fn schema_errors_are_worded_as_dynamodb_words_them() {
        let err = read(r#"{"TableName":"ab"}"#).unwrap_err();
        assert_eq!(err.code, "ValidationException");
        assert_eq!(
            err.message,
            "3 validation errors detected: Value 'ab' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 3; Value null at 'attributeDefinitions' failed to satisfy constraint: Member must not be null; Value null at 'keySchema' failed to satisfy constraint: Member must not be null"
        );
        let err = read(
            r#"{"TableName":"users","AttributeDefinitions":[{"AttributeName":"id","AttributeType":"S"}],
                "KeySchema":[{"AttributeName":"id","KeyType":"HASH"}]}"#,
        )
        .unwrap_err();
        assert_eq!(
            err.message,
            "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED"
        );
        let err = read(
            r#"{"TableName":"users","AttributeDefinitions":[{"AttributeName":"x","AttributeType":"S"}],
                "KeySchema":[{"AttributeName":"id","KeyType":"HASH"}],"BillingMode":"PAY_PER_REQUEST"}"#,
        )
        .unwrap_err();
        assert_eq!(
            err.message,
            "One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [id], AttributeDefinitions: [x]"
        );
        let err = read(
            r#"{"TableName":"users","AttributeDefinitions":[{"AttributeName":"id","AttributeType":"S"},{"AttributeName":"x","AttributeType":"N"}],
                "KeySchema":[{"AttributeName":"id","KeyType":"HASH"}],"BillingMode":"PAY_PER_REQUEST"}"#,
        )
        .unwrap_err();
        assert!(
            err.message.contains("does not exactly match"),
            "{}",
            err.message
        );
        let err = read(
            r#"{"TableName":"users","AttributeDefinitions":[{"AttributeName":"id","AttributeType":"S"}],
                "KeySchema":[{"AttributeName":"id","KeyType":"RANGE"}],"BillingMode":"PAY_PER_REQUEST"}"#,
        )
        .unwrap_err();
        assert_eq!(
            err.message,
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type"
        );
    }
}
