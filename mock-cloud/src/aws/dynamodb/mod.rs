//! Amazon DynamoDB (awsJson1_0, version 2012-08-10): the table control plane.
//! CreateTable, DescribeTable, DeleteTable, ListTables, TagResource, UntagResource and
//! ListTagsOfResource, shaped as botocore's model of the service says.
//!
//! # Semantics
//! - The operation is `X-Amz-Target: DynamoDB_20120810.<Operation>`; any other target (or
//!   none) is 400 `UnknownOperationException`. A body that is not a JSON object, or a
//!   member of the wrong JSON type, is 400 `SerializationException`; constraint
//!   violations are one 400 `ValidationException` listing them ("2 validation errors
//!   detected: …"), then the schema's rules ("One or more parameter values were invalid:
//!   …"). Unknown members are ignored, as DynamoDB ignores them.
//! - Tables belong to an account and a region (the credential scope's). A `TableName` may
//!   be the table's ARN; an ARN of another account or region names no table.
//! - A new table is `CREATING` for the config's database create time
//!   (`provisioning.database_create_ms`, the generic databases' time), then `ACTIVE`; a
//!   deleted one `DELETING` for the database delete time, then gone. CreateTable answers
//!   `CREATING`, DeleteTable `DELETING`. ListTables lists tables in every state.
//! - A table's name is taken until it is gone: 400 `ResourceInUseException` "Table
//!   already exists: …". Deleting, tagging or untagging a table that is `CREATING` or
//!   `DELETING` is `ResourceInUseException`; a table with deletion protection cannot be
//!   deleted (`ValidationException`). A missing table is `ResourceNotFoundException`.
//! - ListTables pages in name order: `Limit` 1 to 100 (default 100),
//!   `LastEvaluatedTableName` when more tables follow. ListTagsOfResource answers every
//!   tag at once, in key order, without `NextToken`.
//! - Not modelled: items, table updates, the 2,500-tables-per-region and 50-tags-per-table
//!   limits, ARNs of indexes and streams as tag targets.
//! - Errors carry DynamoDB's `__type` namespaces: `com.amazonaws.dynamodb.v20120810#…` for
//!   the service's own errors, Coral's for the common ones (`ThrottlingException`,
//!   `ValidationException`, `SerializationException`, …).

mod json;
mod model;
mod spec;
pub(crate) mod table;

use http::{Response, StatusCode};
use serde_json::{Map, Value, json};

use super::accounts::Principal;
use super::contract::{AwsRequest, Ctx, Routed, Unrouted};
use super::envelope::{self, AwsError, RequestId};
use crate::http::respond::ResponseBody;
use crate::service::{DynamoDbOperation, Operation, Protocol};
use json::Violations;
use spec::TableSpec;
use table::{Key, Status, Table};

/// The `X-Amz-Target` prefix of every operation.
const TARGET_PREFIX: &str = "DynamoDB_20120810.";

const CONTENT_TYPE: &str = "application/x-amz-json-1.0";

pub(crate) fn route(request: &AwsRequest<'_>) -> Result<Routed, Unrouted> {
    let target = request
        .headers
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let Some(op) = target
        .strip_prefix(TARGET_PREFIX)
        .and_then(DynamoDbOperation::parse)
    else {
        return Err(Unrouted::new(
            request.protocol.unknown_operation(target, "2012-08-10"),
        ));
    };
    let body = json::object(&request.body)
        .map_err(|e| Unrouted::new(e).journalled_as(Some(op.into()), ""))?;
    let named = match op {
        DynamoDbOperation::ListTables => "",
        DynamoDbOperation::TagResource
        | DynamoDbOperation::UntagResource
        | DynamoDbOperation::ListTagsOfResource => body
            .get("ResourceArn")
            .and_then(Value::as_str)
            .unwrap_or(""),
        _ => body.get("TableName").and_then(Value::as_str).unwrap_or(""),
    };
    let resource = arn_parts(named).map_or(named, |(_, _, name)| name);
    let class = match op {
        DynamoDbOperation::DescribeTable
        | DynamoDbOperation::ListTables
        | DynamoDbOperation::ListTagsOfResource => 0,
        _ => 1,
    };
    // The journal names the table, whether the request named it or its ARN, so that one
    // table's calls read as one resource's.
    Ok(Routed {
        op: Operation::from(op),
        class,
        resource: resource.to_owned(),
        name: resource.to_owned(),
        anonymous: false,
    })
}

pub(crate) fn handle(ctx: &Ctx<'_>, routed: &Routed) -> Result<Response<ResponseBody>, AwsError> {
    let Some(caller) = ctx.caller.as_deref() else {
        return Err(ctx.request.protocol.missing_auth());
    };
    let body = json::object(&ctx.request.body)?;
    let op = DynamoDbOperation::of(routed.op).unwrap_or(DynamoDbOperation::ListTables);
    let answer = match op {
        DynamoDbOperation::CreateTable => create_table(ctx, caller, &body)?,
        DynamoDbOperation::DescribeTable => {
            let key = table_key(ctx, caller, &body)?;
            let mut store = ctx.state().dynamodb.lock();
            let (table, status) = store.get(&key, ctx.now).ok_or_else(|| not_found(&key))?;
            json!({"Table": table.describe(status)})
        }
        DynamoDbOperation::DeleteTable => delete_table(ctx, caller, &body)?,
        DynamoDbOperation::ListTables => list_tables(ctx, caller, &body)?,
        DynamoDbOperation::TagResource => {
            let mut v = Violations::default();
            let arn = resource_arn(&body, &mut v)?;
            let tags = spec::tags(&body, "Tags", "tags", &mut v)?;
            if tags.is_none() {
                v.null("tags");
            }
            v.finish()?;
            with_changeable(ctx, caller, arn, |table| {
                table.tags.extend(tags.unwrap_or_default());
            })?;
            Value::Null
        }
        DynamoDbOperation::UntagResource => {
            let mut v = Violations::default();
            let arn = resource_arn(&body, &mut v)?;
            let keys = json::strings(&body, "TagKeys")?;
            match &keys {
                None => v.null("tagKeys"),
                Some(keys) => {
                    for (i, k) in keys.iter().enumerate() {
                        v.length(&format!("tagKeys.{}.member", i + 1), k, 1, 128);
                    }
                }
            }
            v.finish()?;
            with_changeable(ctx, caller, arn, |table| {
                for k in keys.unwrap_or_default() {
                    table.tags.remove(k);
                }
            })?;
            Value::Null
        }
        DynamoDbOperation::ListTagsOfResource => {
            let mut v = Violations::default();
            let arn = resource_arn(&body, &mut v)?;
            json::string(&body, "NextToken")?;
            v.finish()?;
            let key = arn_key(ctx, caller, arn)?;
            let mut store = ctx.state().dynamodb.lock();
            let (table, _) = store.get(&key, ctx.now).ok_or_else(|| arn_not_found(arn))?;
            let mut read = std::borrow::Cow::Borrowed(&table.tags);
            if let Some(field) = &ctx.drift {
                super::resource_faults::drift_tags(read.to_mut(), field.as_deref());
            }
            let tags: Vec<Value> = read
                .iter()
                .map(|(k, v)| json!({"Key": k, "Value": v}))
                .collect();
            json!({ "Tags": tags })
        }
    };
    let body = match answer {
        Value::Null => String::new(),
        answer => answer.to_string(),
    };
    Ok(envelope::respond(
        &ctx.reply,
        StatusCode::OK,
        CONTENT_TYPE,
        body,
    ))
}

/// What per-resource faults need of the table `name` (see
/// [`super::resource_faults::Facts`]): a create's requested `Tags`; an existing table's
/// tags, creation time and `ResourceNotFoundException` for a read. A `TableName` or
/// `ResourceArn` of another account or region names none of the caller's tables.
pub(crate) fn facts(
    ctx: &Ctx<'_>,
    routed: &Routed,
    name: &str,
    action: crate::model::Action,
    tags: bool,
) -> super::resource_faults::Facts {
    use super::resource_faults::Facts;
    let Some(caller) = ctx.caller.as_deref() else {
        return Facts::default();
    };
    let Ok(body) = json::object(&ctx.request.body) else {
        return Facts::default();
    };
    if action == crate::model::Action::Create {
        let requested = || {
            let mut v = Violations::default();
            let tags = spec::tags(&body, "Tags", "tags", &mut v).ok().flatten();
            tags.unwrap_or_default().into_iter().collect()
        };
        return Facts {
            tags: tags.then(requested),
            ..Facts::default()
        };
    }
    let named = ["TableName", "ResourceArn"]
        .into_iter()
        .find_map(|k| body.get(k).and_then(Value::as_str))
        .unwrap_or_default();
    let key = if named.starts_with("arn:") {
        match arn_key(ctx, caller, named) {
            Ok(key) => key,
            Err(_) => return Facts::default(),
        }
    } else {
        (
            caller.account.clone(),
            ctx.request.region.clone(),
            name.to_owned(),
        )
    };
    let mut store = ctx.state().dynamodb.lock();
    let Some((table, _)) = store.get(&key, ctx.now) else {
        return Facts::default();
    };
    let not_found = match DynamoDbOperation::of(routed.op) {
        Some(DynamoDbOperation::DescribeTable) => Some(not_found(&key)),
        Some(DynamoDbOperation::ListTagsOfResource) => Some(arn_not_found(named)),
        _ => None,
    };
    Facts {
        tags: tags.then(|| table.tags.clone()),
        created: Some(table.created),
        not_found: not_found.filter(|_| action == crate::model::Action::Get),
        new_id: None,
    }
}

fn create_table(
    ctx: &Ctx<'_>,
    caller: &Principal,
    body: &Map<String, Value>,
) -> Result<Value, AwsError> {
    let spec = TableSpec::read(body)?;
    let region = ctx.request.region.clone();
    let arn = format!(
        "arn:aws:dynamodb:{region}:{}:table/{}",
        caller.account_id, spec.name
    );
    let config = &ctx.cloud.inner.config;
    let created = ctx.now;
    let kms_key_arn = spec.sse.as_ref().map(|key| match key {
        Some(key) if key.starts_with("arn:") => key.clone(),
        Some(key) => format!("arn:aws:kms:{region}:{}:key/{key}", caller.account_id),
        // The account's AWS managed key, `alias/aws/dynamodb`.
        None => format!(
            "arn:aws:kms:{region}:{}:key/{}",
            caller.account_id,
            uuid(&format!("{}/{region}/kms", caller.account_id))
        ),
    });
    let table = Table {
        id: uuid(&format!("{arn}@{}", created.as_nanosecond())),
        kms_key_arn,
        arn,
        created,
        // A per-resource slow create holds it CREATING longer, never shorter.
        active_at: after(
            created,
            config
                .database_create
                .max(ctx.slow_create.unwrap_or_default()),
        ),
        gone_at: None,
        tags: spec.tags.iter().cloned().collect(),
        spec,
    };
    let description = table.describe(Status::Creating);
    let name = table.spec.name.clone();
    let key: Key = (caller.account.clone(), region, name.clone());
    if !ctx.state().dynamodb.lock().insert(key, table, ctx.now) {
        return Err(AwsError::new(
            StatusCode::BAD_REQUEST,
            "ResourceInUseException",
            format!("Table already exists: {name}"),
        ));
    }
    Ok(json!({ "TableDescription": description }))
}

fn delete_table(
    ctx: &Ctx<'_>,
    caller: &Principal,
    body: &Map<String, Value>,
) -> Result<Value, AwsError> {
    let key = table_key(ctx, caller, body)?;
    let delete_time = ctx.cloud.inner.config.database_delete;
    let mut store = ctx.state().dynamodb.lock();
    let (table, status) = store.get(&key, ctx.now).ok_or_else(|| not_found(&key))?;
    if status != Status::Active {
        return Err(in_use(status, &table.spec.name));
    }
    if table.spec.deletion_protection {
        return Err(json::validation(
            "Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.",
        ));
    }
    table.gone_at = Some(after(ctx.now, delete_time));
    Ok(json!({"TableDescription": table.describe(Status::Deleting)}))
}

fn list_tables(
    ctx: &Ctx<'_>,
    caller: &Principal,
    body: &Map<String, Value>,
) -> Result<Value, AwsError> {
    let mut v = Violations::default();
    let start = json::string(body, "ExclusiveStartTableName")?;
    if let Some(start) = start {
        v.name("exclusiveStartTableName", start);
    }
    let limit = json::integer(body, "Limit")?;
    if let Some(limit) = limit {
        v.range("limit", limit, 1, 100);
    }
    v.finish()?;
    let limit = usize::try_from(limit.unwrap_or(100)).unwrap_or(100);
    let mut store = ctx.state().dynamodb.lock();
    let (names, more) = store.names(&caller.account, &ctx.request.region, start, limit, ctx.now);
    let mut answer = Map::new();
    if more && let Some(last) = names.last() {
        answer.insert("LastEvaluatedTableName".into(), json!(last));
    }
    answer.insert("TableNames".into(), json!(names));
    Ok(Value::Object(answer))
}

/// Runs `change` on the ACTIVE table that `arn` names.
fn with_changeable(
    ctx: &Ctx<'_>,
    caller: &Principal,
    arn: &str,
    change: impl FnOnce(&mut Table),
) -> Result<(), AwsError> {
    let key = arn_key(ctx, caller, arn)?;
    let mut store = ctx.state().dynamodb.lock();
    let (table, status) = store.get(&key, ctx.now).ok_or_else(|| arn_not_found(arn))?;
    if status != Status::Active {
        return Err(in_use(status, &table.spec.name));
    }
    change(table);
    Ok(())
}

/// A UUID-shaped ID that repeats for `seed` (shaped as the JSON services' request IDs).
fn uuid(seed: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    seed.hash(&mut hasher);
    RequestId::new(Protocol::AwsJson1_0, hasher.finish())
        .id()
        .to_owned()
}

fn after(t: jiff::Timestamp, d: std::time::Duration) -> jiff::Timestamp {
    let d = jiff::SignedDuration::try_from(d).unwrap_or(jiff::SignedDuration::MAX);
    t.saturating_add(d).unwrap_or(t)
}

/// `arn:aws:dynamodb:<region>:<account id>:table/<name>` → (region, account ID, name).
fn arn_parts(arn: &str) -> Option<(&str, &str, &str)> {
    let rest = arn.strip_prefix("arn:aws:dynamodb:")?;
    let (region, rest) = rest.split_once(':')?;
    let (account, rest) = rest.split_once(':')?;
    let name = rest.strip_prefix("table/")?;
    let valid = !region.is_empty()
        && crate::config::is_account_id(account)
        && !name.is_empty()
        && !name.contains('/');
    valid.then_some((region, account, name))
}

/// The table that `TableName` (a name or an ARN) names.
fn table_key(
    ctx: &Ctx<'_>,
    caller: &Principal,
    body: &Map<String, Value>,
) -> Result<Key, AwsError> {
    let mut v = Violations::default();
    let name = json::string(body, "TableName")?;
    match name {
        None => v.null("tableName"),
        Some(name) if name.starts_with("arn:") => v.length("tableName", name, 1, 1024),
        Some(name) => v.name("tableName", name),
    }
    v.finish()?;
    let name = name.unwrap_or_default();
    if name.starts_with("arn:") {
        return arn_key(ctx, caller, name);
    }
    Ok((
        caller.account.clone(),
        ctx.request.region.clone(),
        name.to_owned(),
    ))
}

/// `ResourceArn`, recording its violations.
fn resource_arn<'a>(body: &'a Map<String, Value>, v: &mut Violations) -> Result<&'a str, AwsError> {
    let arn = json::string(body, "ResourceArn")?;
    match arn {
        None => v.null("resourceArn"),
        Some(arn) => v.length("resourceArn", arn, 1, 1283),
    }
    Ok(arn.unwrap_or_default())
}

/// The table an ARN names: its region and account must be the caller's.
fn arn_key(ctx: &Ctx<'_>, caller: &Principal, arn: &str) -> Result<Key, AwsError> {
    let Some((region, account_id, name)) = arn_parts(arn) else {
        return Err(json::validation(format!(
            "Invalid TableArn: Invalid ResourceArn provided as input {arn}"
        )));
    };
    if region != ctx.request.region || account_id != &*caller.account_id {
        return Err(arn_not_found(arn));
    }
    Ok((caller.account.clone(), region.to_owned(), name.to_owned()))
}

fn not_found(key: &Key) -> AwsError {
    AwsError::new(
        StatusCode::BAD_REQUEST,
        "ResourceNotFoundException",
        format!("Requested resource not found: Table: {} not found", key.2),
    )
}

fn arn_not_found(arn: &str) -> AwsError {
    AwsError::new(
        StatusCode::BAD_REQUEST,
        "ResourceNotFoundException",
        format!("Requested resource not found: ResourceArn: {arn} not found"),
    )
}

fn in_use(status: Status, name: &str) -> AwsError {
    let doing = match status {
        Status::Creating => "being created",
        Status::Deleting => "being deleted",
        Status::Active => "in use",
    };
    AwsError::new(
        StatusCode::BAD_REQUEST,
        "ResourceInUseException",
        format!("Attempt to change a resource which is still in use: Table is {doing}: {name}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_arns_give_region_account_and_name() {
        assert_eq!(
            arn_parts("arn:aws:dynamodb:eu-west-1:123456789012:table/users"),
            Some(("eu-west-1", "123456789012", "users"))
        );
        assert_eq!(
            arn_parts("arn:aws:dynamodb:eu-west-1:123456789012:table/users/index/by-x"),
            None
        );
        assert_eq!(arn_parts("arn:aws:s3:::bucket"), None);
    }
}
