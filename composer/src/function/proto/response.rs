//! `RunFunctionResponse` and what only a response carries: meta with its TTL, results,
//! conditions and requirements.

use std::collections::BTreeMap;

use super::State;

/// What a function answers.
///
/// `message RunFunctionResponse` in the proto.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RunFunctionResponse {
    /// Metadata: the request's tag and how long the response stays valid.
    #[prost(message, optional, tag = "1")]
    pub meta: Option<ResponseMeta>,
    /// The desired state: everything the request desired, plus this step's changes.
    #[prost(message, optional, tag = "2")]
    pub desired: Option<State>,
    /// Results, which core turns into events; a FATAL one stops the pipeline.
    #[prost(message, repeated, tag = "3")]
    pub results: Vec<Result>,
    /// The pipeline's context, for the next step.
    #[prost(message, optional, tag = "4")]
    pub context: Option<super::Struct>,
    /// Resources and schemas the function needs before it can finish.
    #[prost(message, optional, tag = "5")]
    pub requirements: Option<Requirements>,
    /// Conditions to set on the XR (and its claim).
    #[prost(message, repeated, tag = "6")]
    pub conditions: Vec<Condition>,
    /// Output for the caller (used by operations, not by compositions).
    #[prost(message, optional, tag = "7")]
    pub output: Option<super::Struct>,
}

/// `message ResponseMeta` in the proto.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ResponseMeta {
    /// The request's tag.
    #[prost(string, tag = "1")]
    pub tag: String,
    /// How long the response is valid; with realtime compositions, core requeues the XR
    /// after the smallest non-zero TTL of the pipeline's steps.
    #[prost(message, optional, tag = "2")]
    pub ttl: Option<prost_types::Duration>,
}

/// One result of a function run.
///
/// `message Result` in the proto (the name shadows `std::result::Result` where imported).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Result {
    /// [`Severity`]
    #[prost(enumeration = "Severity", tag = "1")]
    pub severity: i32,
    /// A human-readable message.
    #[prost(string, tag = "2")]
    pub message: String,
    /// A CamelCase reason, for the event.
    #[prost(string, optional, tag = "3")]
    pub reason: Option<String>,
    /// Which resources the result is reported on ([`Target`]).
    #[prost(enumeration = "Target", optional, tag = "4")]
    pub target: Option<i32>,
}

/// `enum Severity` in the proto.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum Severity {
    /// `SEVERITY_UNSPECIFIED`
    Unspecified = 0,
    /// `SEVERITY_FATAL`: the pipeline stops and the reconcile fails.
    Fatal = 1,
    /// `SEVERITY_WARNING`
    Warning = 2,
    /// `SEVERITY_NORMAL`
    Normal = 3,
}

/// `enum Target` in the proto.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum Target {
    /// `TARGET_UNSPECIFIED`
    Unspecified = 0,
    /// `TARGET_COMPOSITE`
    Composite = 1,
    /// `TARGET_COMPOSITE_AND_CLAIM`
    CompositeAndClaim = 2,
}

/// A condition a function sets on the XR.
///
/// `message Condition` in the proto.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Condition {
    /// The condition's type, e.g. `DatabaseReady`.
    #[prost(string, tag = "1")]
    pub r#type: String,
    /// [`Status`]
    #[prost(enumeration = "Status", tag = "2")]
    pub status: i32,
    /// A CamelCase reason.
    #[prost(string, tag = "3")]
    pub reason: String,
    /// A human-readable message.
    #[prost(string, optional, tag = "4")]
    pub message: Option<String>,
    /// [`Target`]
    #[prost(enumeration = "Target", optional, tag = "5")]
    pub target: Option<i32>,
}

/// A condition's status.
///
/// `enum Status` in the proto.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum Status {
    /// `STATUS_CONDITION_UNSPECIFIED`
    ConditionUnspecified = 0,
    /// `STATUS_CONDITION_UNKNOWN`
    ConditionUnknown = 1,
    /// `STATUS_CONDITION_TRUE`
    ConditionTrue = 2,
    /// `STATUS_CONDITION_FALSE`
    ConditionFalse = 3,
}

/// What a function needs before it can finish: core fetches it and calls the step again.
///
/// `message Requirements` in the proto.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Requirements {
    /// Deprecated in the proto: `resources` replaces it.
    #[prost(btree_map = "string, message", tag = "1")]
    pub extra_resources: BTreeMap<String, ResourceSelector>,
    /// Resources to fetch, by the name of the requirement.
    #[prost(btree_map = "string, message", tag = "2")]
    pub resources: BTreeMap<String, ResourceSelector>,
    /// OpenAPI schemas to fetch, by the name of the requirement.
    #[prost(btree_map = "string, message", tag = "3")]
    pub schemas: BTreeMap<String, SchemaSelector>,
}

/// `message SchemaSelector` in the proto.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchemaSelector {
    /// The kind's API version.
    #[prost(string, tag = "1")]
    pub api_version: String,
    /// The kind.
    #[prost(string, tag = "2")]
    pub kind: String,
}

/// Which resources a requirement selects.
///
/// `message ResourceSelector` in the proto.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ResourceSelector {
    /// The API version of the resources.
    #[prost(string, tag = "1")]
    pub api_version: String,
    /// The kind of the resources.
    #[prost(string, tag = "2")]
    pub kind: String,
    /// By name or by labels.
    #[prost(oneof = "resource_selector::Match", tags = "3, 4")]
    pub r#match: Option<resource_selector::Match>,
    /// The namespace; unset for cluster-scoped resources or all namespaces.
    #[prost(string, optional, tag = "5")]
    pub namespace: Option<String>,
}

/// The `oneof match` of [`ResourceSelector`].
pub mod resource_selector {
    /// `oneof match` in `message ResourceSelector`.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Match {
        /// `match_name`
        #[prost(string, tag = "3")]
        MatchName(String),
        /// `match_labels`
        #[prost(message, tag = "4")]
        MatchLabels(super::MatchLabels),
    }
}

/// `message MatchLabels` in the proto.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MatchLabels {
    /// The labels that must all match.
    #[prost(btree_map = "string, string", tag = "1")]
    pub labels: BTreeMap<String, String>,
}
