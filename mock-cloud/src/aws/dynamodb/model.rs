//! What a table is created with, once read and checked (`spec.rs` reads it): plain data,
//! shared by the reader and the store.

use serde_json::Value;

/// A key schema: the HASH attribute, then the RANGE attribute if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeySchema(pub Vec<(String, String)>);

/// How a table pays for throughput.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Billing {
    /// `PROVISIONED`, with read and write capacity units.
    Provisioned { read: i64, write: i64 },
    /// `PAY_PER_REQUEST` (on demand).
    PayPerRequest,
}

/// A secondary index.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Index {
    pub name: String,
    pub key_schema: KeySchema,
    /// The `Projection` as sent (its type checked).
    pub projection: Value,
    /// A global index's throughput (provisioned tables only).
    pub throughput: Option<(i64, i64)>,
}

/// Everything a table is created with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TableSpec {
    pub name: String,
    pub attributes: Vec<(String, String)>,
    pub key_schema: KeySchema,
    pub billing: Billing,
    pub local_indexes: Vec<Index>,
    pub global_indexes: Vec<Index>,
    /// The stream's view type, when streams are enabled.
    pub stream: Option<String>,
    /// When server-side encryption with KMS is enabled: the key given (an ID or ARN), or
    /// `None` for the AWS managed key.
    pub sse: Option<Option<String>>,
    pub table_class: Option<String>,
    pub deletion_protection: bool,
    pub tags: Vec<(String, String)>,
}
