//! The `resources` section: groups of managed resources and their kinds.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::{PolicyName, RawDriftShare, RawFaultShare};

/// A named group of resources of one kind.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawGroup {
    /// Group name, unique: 1-63 of a-z, 0-9 and `-`.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// The kind: one of the sample provider's short kinds (`Bucket`, `Database`, `Record`)
    /// without `apiVersion`, or with `apiVersion` any kind the API server serves (the
    /// embedded target serves the provider's CRDs: the AWS flavour's
    /// `s3.aws.m.loadtest.dev/v1beta1` `Bucket` and the like).
    #[schemars(with = "String")]
    pub kind: Spanned<String>,
    /// `group/version` of `kind` (`s3.aws.m.loadtest.dev/v1beta1`). Plural and scope come
    /// from the CRDs the target serves.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub api_version: Option<Spanned<String>>,
    /// Namespace of the group's objects, for namespaced kinds with `apiVersion` (default:
    /// the run's, `harness-<scenario>`). Cluster-scoped kinds take none.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub namespace: Option<Spanned<String>>,
    /// The whole object beyond `spec.forProvider` (which `spec` gives), with the
    /// placeholders in any string: `metadata.labels`, `metadata.annotations`, and `spec`
    /// fields such as `providerConfigRef`, `managementPolicies`, `writeConnectionSecretToRef`.
    /// The rendered object must pass the kind's schema.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Value>")]
    pub template: Option<Spanned<serde_json::Value>>,
    /// The conditions that make a resource Ready for the harness. Default: `Ready` and
    /// `Synced` both `True` for kinds with `apiVersion`; `Ready` `True` for the short kinds.
    #[serde(default)]
    #[schemars(with = "Option<Vec<RawCondition>>")]
    pub ready: Option<Spanned<Vec<RawCondition>>>,
    /// How many (≥ 1).
    #[schemars(with = "u32", range(min = 1))]
    pub count: Spanned<u32>,
    /// Cloud account of the group. Default: the first account.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub account: Option<Spanned<String>>,
    /// Name of resource `index` (0-based). Placeholders: `{{index}}`, `{{group}}`,
    /// `{{scenario}}`. Default `{{group}}-{{index}}`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub name_pattern: Option<Spanned<String>>,
    /// The custom resource's `spec.forProvider`, with the same placeholders in any string.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Value>")]
    pub spec: Option<Spanned<serde_json::Value>>,
    /// Annotations for shares of the group. Shares are consecutive index ranges in list
    /// order (the first share gets the lowest indexes) and may not add up past 100 %.
    #[serde(default)]
    pub annotations: Vec<RawAnnotationShare>,
    /// Per-resource cloud faults for shares of the group: each share is a consecutive
    /// index range counted down from the group's highest index, in list order (then
    /// `drift`'s share below them); together they may not pass 100 %.
    #[serde(default)]
    pub faults: Vec<RawFaultShare>,
    /// A share of the group whose cloud resource drifts on every read (one field differs
    /// from the desired value), so every reconcile updates it.
    #[serde(default)]
    pub drift: Option<RawDriftShare>,
    /// `spec.managementPolicies` of every resource of the group (crossplane's; `[Observe]`
    /// observes only: the harness then creates nothing in the cloud for them).
    #[serde(default)]
    #[schemars(with = "Option<Vec<PolicyName>>")]
    pub management_policies: Option<Spanned<Vec<PolicyName>>>,
}

/// A status condition a Ready resource has.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawCondition {
    /// Condition type (`Ready`, `Synced`).
    #[serde(rename = "type")]
    pub type_: String,
    /// Its status (default `True`).
    #[serde(default)]
    pub status: Option<String>,
}

/// Resource kinds the provider manages.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Deserialize,
    JsonSchema,
    serde::Serialize,
)]
pub enum Kind {
    /// An object-storage bucket (synchronous).
    Bucket,
    /// A database (asynchronous: provisioning takes `cloud.provisioning.databaseCreate`).
    Database,
    /// A DNS record (synchronous).
    Record,
}

impl Kind {
    /// The mock-cloud collection the provider's controller of this kind calls.
    #[must_use]
    pub fn collection(self) -> &'static str {
        use provider::crd::CloudKind;
        match self {
            Kind::Bucket => provider::crd::Bucket::COLLECTION,
            Kind::Database => provider::crd::Database::COLLECTION,
            Kind::Record => provider::crd::Record::COLLECTION,
        }
    }

    /// The kind's scope, which picks its global bucket when the provider runs one per scope
    /// (`scopedBuckets`). The sample provider's kinds are all namespaced.
    #[must_use]
    pub fn scope(self) -> limiter::crossplane::Scope {
        match self {
            Kind::Bucket | Kind::Database | Kind::Record => limiter::crossplane::Scope::Namespaced,
        }
    }
}

/// Annotations for a share of a group.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawAnnotationShare {
    /// Share of the group, in percent (0 < percent ≤ 100); rounded to whole resources.
    #[schemars(with = "f64")]
    pub percent: Spanned<f64>,
    /// Annotations to set; values may use the placeholders.
    #[schemars(with = "BTreeMap<String, String>")]
    pub values: Spanned<BTreeMap<String, String>>,
}
