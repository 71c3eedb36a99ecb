//! `ProviderConfig`: which mock-cloud account a resource's calls go to, and its token.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::SecretKeySelector;

/// A cluster-scoped ProviderConfig: a mock-cloud account and the Secret key holding a bearer
/// token for it. Resources of different ProviderConfigs spend different account quotas.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "mockcloud.example.org",
    version = "v1alpha1",
    kind = "ProviderConfig",
    category = "providerconfig",
    category = "mockcloud",
    printcolumn = r#"{"name":"ACCOUNT","type":"string","jsonPath":".spec.account"}"#,
    printcolumn = r#"{"name":"SECRET-NAME","type":"string","jsonPath":".spec.credentials.secretRef.name","priority":1}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ProviderConfigSpec {
    /// The mock-cloud account (the `{account}` path segment).
    pub account: String,
    /// Where the bearer token is.
    pub credentials: ProviderCredentials,
}

/// `ProviderConfig.spec.credentials`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderCredentials {
    /// The Secret key holding the bearer token.
    pub secret_ref: SecretKeySelector,
}
