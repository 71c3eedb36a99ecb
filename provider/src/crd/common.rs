//! What every managed resource shares: the ProviderConfig reference, conditions and status.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `crossplane.io/external-name`: the name of the resource in the cloud.
pub const EXTERNAL_NAME_ANNOTATION: &str = "crossplane.io/external-name";
/// `crossplane.io/external-create-pending`: stamped just before every Create call.
pub const CREATE_PENDING_ANNOTATION: &str = "crossplane.io/external-create-pending";
/// `crossplane.io/external-create-succeeded`: stamped after a Create call succeeded.
pub const CREATE_SUCCEEDED_ANNOTATION: &str = "crossplane.io/external-create-succeeded";
/// `crossplane.io/external-create-failed`: stamped after a Create call failed.
pub const CREATE_FAILED_ANNOTATION: &str = "crossplane.io/external-create-failed";
/// `crossplane.io/paused`: `"true"` stops reconciling the resource.
pub const PAUSED_ANNOTATION: &str = "crossplane.io/paused";
/// The finalizer that holds a managed resource until its cloud resource is gone.
pub const FINALIZER: &str = "finalizer.managedresource.crossplane.io";
/// The API group of every kind of this provider.
pub const GROUP: &str = "mockcloud.example.org";
/// The API version of every kind of this provider.
pub const VERSION: &str = "v1alpha1";

fn default_provider_config() -> String {
    "default".to_owned()
}

fn default_provider_config_kind() -> String {
    "ProviderConfig".to_owned()
}

/// `spec.providerConfigRef`: which [`crate::crd::ProviderConfig`] (cloud account and
/// credentials) the resource uses. Shaped like crossplane-runtime v2's
/// `ProviderConfigReference` (`{kind, name}`), so a real provider's `Connect` reads the
/// kind it expects; both fields have schema defaults, so `{}` means the ProviderConfig
/// named `default`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProviderConfigReference {
    /// Kind of the referenced object: this provider serves `ProviderConfig`.
    #[serde(default = "default_provider_config_kind")]
    pub kind: String,
    /// Name of the referenced object.
    #[serde(default = "default_provider_config")]
    pub name: String,
}

impl Default for ProviderConfigReference {
    fn default() -> Self {
        ProviderConfigReference {
            kind: default_provider_config_kind(),
            name: default_provider_config(),
        }
    }
}

/// A condition, as crossplane-runtime writes them (`xpv2.Condition`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// `Ready` or `Synced`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// When the status last changed (RFC 3339, second resolution).
    pub last_transition_time: String,
    /// A CamelCase reason.
    pub reason: String,
    /// Details, for errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The `metadata.generation` the condition was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

impl Condition {
    /// crossplane-runtime's `Condition.Equal`: type, status, reason and message, plus the
    /// observed generation when both carry one. The transition time is not compared.
    #[must_use]
    pub fn equivalent(&self, other: &Condition) -> bool {
        let generations_agree = match (self.observed_generation, other.observed_generation) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        self.type_ == other.type_
            && self.status == other.status
            && self.reason == other.reason
            && self.message == other.message
            && generations_agree
    }
}

/// What the cloud reported at the last Observe.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AtProvider {
    /// The cloud's lifecycle state: `creating`, `available` or `deleting`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// The cloud's generation of the resource (1 at creation, +1 on every update).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
}

// `A` is the kind's `atProvider`: [`AtProvider`] for the mock-cloud kinds.
/// The status of every managed resource: `ManagedResourceStatus` plus `atProvider`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedStatus<A = AtProvider> {
    /// The cloud's view of the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_provider: Option<A>,
    /// `Ready` and `Synced`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The last `crossplane.io/reconcile-requested-at` token handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
}

impl<A> Default for ManagedStatus<A> {
    fn default() -> Self {
        ManagedStatus {
            at_provider: None,
            conditions: Vec::new(),
            last_handled_reconcile_at: None,
        }
    }
}

impl<A> ManagedStatus<A> {
    /// The condition of a type, if set.
    #[must_use]
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    /// crossplane-runtime's `SetConditions`: replaces the condition of the same type unless it
    /// is equivalent, so an unchanged condition keeps its transition time and the status write
    /// stays byte-identical.
    pub fn set_condition(&mut self, condition: Condition) {
        match self
            .conditions
            .iter_mut()
            .find(|c| c.type_ == condition.type_)
        {
            Some(existing) if existing.equivalent(&condition) => {}
            Some(existing) => *existing = condition,
            None => self.conditions.push(condition),
        }
    }

    /// Whether the condition of `type_` has status `True`.
    #[must_use]
    pub fn is_true(&self, type_: &str) -> bool {
        self.condition(type_).is_some_and(|c| c.status == "True")
    }
}

/// The namespace, name and key of a Secret's value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SecretKeySelector {
    /// Namespace of the Secret.
    pub namespace: String,
    /// Name of the Secret.
    pub name: String,
    /// Key in the Secret's data.
    pub key: String,
}

/// A managed kind's custom resource: the struct with `#[derive(CustomResource, …)]`, the
/// `#[kube(…)]` arguments given as `kube(…)` followed by crossplane's four printer columns (`READY`,
/// `SYNCED`, `EXTERNAL-NAME`, `AGE`), and camelCase fields. Every managed kind of both
/// flavours is declared through it, so their columns are written once.
macro_rules! managed_kind {
    (
        $(#[$attr:meta])*
        kube($($kube:tt)*)
        $vis:vis struct $name:ident $body:tt
    ) => {
        $(#[$attr])*
        #[derive(
            kube::CustomResource,
            Clone,
            Debug,
            PartialEq,
            serde::Serialize,
            serde::Deserialize,
            schemars::JsonSchema,
        )]
        #[kube(
            $($kube)*,
            printcolumn = r#"{"name":"READY","type":"string","jsonPath":".status.conditions[?(@.type=='Ready')].status"}"#,
            printcolumn = r#"{"name":"SYNCED","type":"string","jsonPath":".status.conditions[?(@.type=='Synced')].status"}"#,
            printcolumn = r#"{"name":"EXTERNAL-NAME","type":"string","jsonPath":".metadata.annotations.crossplane\\.io/external-name"}"#,
            printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
        )]
        #[serde(rename_all = "camelCase")]
        $vis struct $name $body
    };
}
pub(crate) use managed_kind;

#[cfg(test)]
mod tests {
    use super::*;

    fn condition(status: &str, generation: Option<i64>, at: &str) -> Condition {
        Condition {
            type_: "Synced".into(),
            status: status.into(),
            last_transition_time: at.into(),
            reason: "ReconcileSuccess".into(),
            message: None,
            observed_generation: generation,
        }
    }

    #[test]
    fn an_equivalent_condition_keeps_its_transition_time() {
        let mut status = ManagedStatus::<AtProvider>::default();
        status.set_condition(condition("True", Some(1), "t1"));
        status.set_condition(condition("True", Some(1), "t2"));
        assert_eq!(status.conditions[0].last_transition_time, "t1");
        status.set_condition(condition("True", Some(2), "t3"));
        assert_eq!(status.conditions[0].last_transition_time, "t3");
        assert_eq!(status.conditions.len(), 1);
    }

    #[test]
    fn the_provider_config_reference_defaults_to_default() {
        let r: ProviderConfigReference = serde_json::from_str("{}").unwrap();
        assert_eq!(r.name, "default");
        assert_eq!(r.kind, "ProviderConfig");
    }
}
