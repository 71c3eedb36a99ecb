//! DynamoDB's state: tables per account and region, each with its spec, its tags and its
//! life cycle on the cloud's wall clock (`CREATING` until its create time has passed,
//! then `ACTIVE`; after a delete `DELETING` until its delete time has passed, then gone).
//! Pure functions of `now`, tested without a server.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use serde_json::{Value, json};
use strum::IntoStaticStr;

use super::model::{Billing, Index, KeySchema, TableSpec};

/// A table's status, as DynamoDB names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, IntoStaticStr)]
#[strum(serialize_all = "UPPERCASE")]
pub(crate) enum Status {
    Creating,
    Active,
    Deleting,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One table.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    pub spec: TableSpec,
    pub arn: String,
    pub id: String,
    pub created: Timestamp,
    pub active_at: Timestamp,
    /// Set by a delete: when the table is gone.
    pub gone_at: Option<Timestamp>,
    pub tags: BTreeMap<String, String>,
    /// The KMS key's ARN, for a table encrypted with KMS.
    pub kms_key_arn: Option<String>,
}

impl Table {
    /// The status at `now`; `None` once a deleted table is gone.
    pub fn status(&self, now: Timestamp) -> Option<Status> {
        match self.gone_at {
            Some(gone) if now >= gone => None,
            Some(_) => Some(Status::Deleting),
            None if now < self.active_at => Some(Status::Creating),
            None => Some(Status::Active),
        }
    }

    /// The `TableDescription` at `status`.
    pub fn describe(&self, status: Status) -> Value {
        let spec = &self.spec;
        let mut d = serde_json::Map::new();
        d.insert("TableName".into(), json!(spec.name));
        d.insert("TableArn".into(), json!(self.arn));
        d.insert("TableId".into(), json!(self.id));
        d.insert("TableStatus".into(), json!(status.as_str()));
        d.insert("CreationDateTime".into(), seconds(self.created));
        d.insert(
            "AttributeDefinitions".into(),
            Value::Array(
                spec.attributes
                    .iter()
                    .map(|(n, t)| json!({"AttributeName": n, "AttributeType": t}))
                    .collect(),
            ),
        );
        d.insert("KeySchema".into(), key_schema(&spec.key_schema));
        let (read, write) = match spec.billing {
            Billing::Provisioned { read, write } => (read, write),
            Billing::PayPerRequest => (0, 0),
        };
        d.insert("ProvisionedThroughput".into(), throughput(read, write));
        if spec.billing == Billing::PayPerRequest {
            d.insert(
                "BillingModeSummary".into(),
                json!({"BillingMode": "PAY_PER_REQUEST", "LastUpdateToPayPerRequestDateTime": seconds(self.created)}),
            );
        }
        d.insert("TableSizeBytes".into(), json!(0));
        d.insert("ItemCount".into(), json!(0));
        if !spec.local_indexes.is_empty() {
            let lsis = spec.local_indexes.iter().map(|i| {
                json!({
                    "IndexName": i.name,
                    "KeySchema": key_schema(&i.key_schema),
                    "Projection": i.projection,
                    "IndexSizeBytes": 0,
                    "ItemCount": 0,
                    "IndexArn": format!("{}/index/{}", self.arn, i.name),
                })
            });
            d.insert("LocalSecondaryIndexes".into(), lsis.collect());
        }
        if !spec.global_indexes.is_empty() {
            let gsis = spec
                .global_indexes
                .iter()
                .map(|i| self.global_index(i, status));
            d.insert("GlobalSecondaryIndexes".into(), gsis.collect());
        }
        if let Some(view) = &spec.stream {
            let label = self.created.strftime("%Y-%m-%dT%H:%M:%S%.3f").to_string();
            d.insert(
                "StreamSpecification".into(),
                json!({"StreamEnabled": true, "StreamViewType": view}),
            );
            d.insert(
                "LatestStreamArn".into(),
                json!(format!("{}/stream/{label}", self.arn)),
            );
            d.insert("LatestStreamLabel".into(), json!(label));
        }
        if let Some(arn) = &self.kms_key_arn {
            d.insert(
                "SSEDescription".into(),
                json!({"Status": "ENABLED", "SSEType": "KMS", "KMSMasterKeyArn": arn}),
            );
        }
        if let Some(class) = &spec.table_class {
            d.insert("TableClassSummary".into(), json!({"TableClass": class}));
        }
        d.insert(
            "DeletionProtectionEnabled".into(),
            json!(spec.deletion_protection),
        );
        Value::Object(d)
    }

    fn global_index(&self, index: &Index, status: Status) -> Value {
        let (read, write) = index.throughput.unwrap_or((0, 0));
        let index_status = match status {
            Status::Creating => "CREATING",
            Status::Active => "ACTIVE",
            Status::Deleting => "DELETING",
        };
        json!({
            "IndexName": index.name,
            "KeySchema": key_schema(&index.key_schema),
            "Projection": index.projection,
            "IndexStatus": index_status,
            "ProvisionedThroughput": throughput(read, write),
            "IndexSizeBytes": 0,
            "ItemCount": 0,
            "IndexArn": format!("{}/index/{}", self.arn, index.name),
        })
    }
}

/// A timestamp as awsJson writes it: epoch seconds with milliseconds.
fn seconds(t: Timestamp) -> Value {
    json!(t.as_millisecond() as f64 / 1000.0)
}

fn key_schema(schema: &KeySchema) -> Value {
    schema
        .0
        .iter()
        .map(|(n, k)| json!({"AttributeName": n, "KeyType": k}))
        .collect()
}

fn throughput(read: i64, write: i64) -> Value {
    json!({"NumberOfDecreasesToday": 0, "ReadCapacityUnits": read, "WriteCapacityUnits": write})
}

/// Where a table lives: its account (the mock-cloud account name), region and name.
pub(crate) type Key = (Arc<str>, String, String);

/// Every table of every account.
#[derive(Debug, Default)]
pub(crate) struct Store {
    tables: BTreeMap<Key, Table>,
}

impl Store {
    /// Forgets the tables that are gone at `now`.
    fn prune(&mut self, now: Timestamp) {
        self.tables.retain(|_, t| t.status(now).is_some());
    }

    /// The table at `key` with its status, unless it is gone.
    pub fn get(&mut self, key: &Key, now: Timestamp) -> Option<(&mut Table, Status)> {
        let Some(status) = self.tables.get(key)?.status(now) else {
            self.tables.remove(key);
            return None;
        };
        self.tables.get_mut(key).map(|table| (table, status))
    }

    /// Adds `table` at `key`, unless a table (not gone) is there: then `false`.
    #[must_use]
    pub fn insert(&mut self, key: Key, table: Table, now: Timestamp) -> bool {
        if self.get(&key, now).is_some() {
            return false;
        }
        self.tables.insert(key, table);
        true
    }

    /// The names of an account's tables in a region (including ones creating or
    /// deleting), in name order, after `start` (exclusive), at most `limit`; and whether
    /// more follow.
    pub fn names(
        &mut self,
        account: &Arc<str>,
        region: &str,
        start: Option<&str>,
        limit: usize,
        now: Timestamp,
    ) -> (Vec<String>, bool) {
        self.prune(now);
        let mut names = self
            .tables
            .keys()
            .filter(|(a, r, _)| a == account && r == region)
            .map(|(_, _, n)| n)
            .filter(|n| start.is_none_or(|s| n.as_str() > s));
        let page: Vec<String> = names.by_ref().take(limit).cloned().collect();
        let more = names.next().is_some();
        (page, more)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> TableSpec {
        TableSpec {
            name: name.to_owned(),
            attributes: vec![("id".into(), "S".into())],
            key_schema: KeySchema(vec![("id".into(), "HASH".into())]),
            billing: Billing::PayPerRequest,
            local_indexes: Vec::new(),
            global_indexes: Vec::new(),
            stream: None,
            sse: None,
            table_class: None,
            deletion_protection: false,
            tags: Vec::new(),
        }
    }

    fn table(name: &str, created: Timestamp) -> Table {
        Table {
            spec: spec(name),
            arn: format!("arn:aws:dynamodb:us-east-1:000000000000:table/{name}"),
            id: "6a1f2c3d-0000-4000-8000-000000000000".into(),
            created,
            active_at: created + jiff::SignedDuration::from_secs(5),
            gone_at: None,
            tags: BTreeMap::new(),
            kms_key_arn: None,
        }
    }

    #[test]
    fn a_table_is_creating_then_active_then_deleting_then_gone() {
        let t0 = Timestamp::from_second(1_800_000_000).unwrap();
        let at = |s: i64| t0 + jiff::SignedDuration::from_secs(s);
        let mut t = table("users", t0);
        assert_eq!(t.status(at(4)), Some(Status::Creating));
        assert_eq!(t.status(at(5)), Some(Status::Active));
        t.gone_at = Some(at(13));
        assert_eq!(t.status(at(12)), Some(Status::Deleting));
        assert_eq!(t.status(at(13)), None);
        let d = t.describe(Status::Deleting);
        assert_eq!(d["TableStatus"], "DELETING");
        assert_eq!(d["CreationDateTime"], 1_800_000_000.0);
        assert_eq!(d["BillingModeSummary"]["BillingMode"], "PAY_PER_REQUEST");
        assert_eq!(d["DeletionProtectionEnabled"], false);
    }

    #[test]
    fn names_page_in_order_per_account_and_region_and_skip_gone_tables() {
        let t0 = Timestamp::from_second(1_800_000_000).unwrap();
        let mut store = Store::default();
        let account: Arc<str> = "default".into();
        for name in ["c", "a", "b"] {
            let key = (account.clone(), "us-east-1".to_owned(), name.to_owned());
            assert!(store.insert(key, table(name, t0), t0));
        }
        let other = ("other".into(), "us-east-1".to_owned(), "z".to_owned());
        assert!(store.insert(other, table("z", t0), t0));
        assert_eq!(
            store.names(&account, "us-east-1", None, 2, t0),
            (vec!["a".to_owned(), "b".to_owned()], true)
        );
        assert_eq!(
            store.names(&account, "us-east-1", Some("b"), 2, t0),
            (vec!["c".to_owned()], false)
        );
        assert_eq!(store.names(&account, "eu-west-1", None, 2, t0).0.len(), 0);
        let key = (account.clone(), "us-east-1".to_owned(), "a".to_owned());
        assert!(!store.insert(key.clone(), table("a", t0), t0));
        store.get(&key, t0).unwrap().0.gone_at = Some(t0);
        assert!(store.get(&key, t0).is_none());
    }
}
