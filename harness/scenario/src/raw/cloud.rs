//! The `cloud` section: accounts, quotas, latencies, injected errors, provisioning times.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::DurationText;

/// The mock cloud.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawCloud {
    /// Accounts; resources name theirs. Default: one account `default`.
    #[serde(default)]
    pub accounts: Vec<RawAccount>,
    /// Quotas of every account (an account can override them class by class). Classes left
    /// out have no quota.
    #[serde(default)]
    pub quotas: RawQuotas,
    /// Latency of one call, per action class. Default: none.
    #[serde(default)]
    pub latency: RawClasses<RawLatency>,
    /// Share of calls failed with an error status, per action class. Default: none.
    #[serde(default)]
    pub errors: RawClasses<RawErrors>,
    /// Asynchronous provisioning times.
    #[serde(default)]
    pub provisioning: RawProvisioning,
}

/// A cloud account.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawAccount {
    /// The account's name: 1-64 of a-z A-Z 0-9 - _ .
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// Overrides of the cloud-wide quotas, class by class.
    #[serde(default)]
    pub quotas: RawQuotas,
}

/// Token-bucket quotas per action class (read = get, list = list, mutate = create and
/// update, delete = delete).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawQuotas {
    /// Gets.
    #[serde(default)]
    pub read: Option<RawBucket>,
    /// Lists.
    #[serde(default)]
    pub list: Option<RawBucket>,
    /// Creates and updates.
    #[serde(default)]
    pub mutate: Option<RawBucket>,
    /// Deletes.
    #[serde(default)]
    pub delete: Option<RawBucket>,
}

/// A token bucket: `burst` tokens, refilled at `perSecond`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawBucket {
    /// Bucket size b (≥ 1).
    #[schemars(with = "f64")]
    pub burst: Spanned<f64>,
    /// Refill r per second (> 0; may be fractional).
    #[schemars(with = "f64")]
    pub per_second: Spanned<f64>,
}

/// A value per action class.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    rename_all = "camelCase",
    bound(deserialize = "T: Deserialize<'de>")
)]
pub struct RawClasses<T> {
    /// Gets.
    #[serde(default)]
    pub read: Option<T>,
    /// Lists.
    #[serde(default)]
    pub list: Option<T>,
    /// Creates and updates.
    #[serde(default)]
    pub mutate: Option<T>,
    /// Deletes.
    #[serde(default)]
    pub delete: Option<T>,
}

impl<T> Default for RawClasses<T> {
    fn default() -> Self {
        RawClasses {
            read: None,
            list: None,
            mutate: None,
            delete: None,
        }
    }
}

/// A latency distribution: exactly one of `fixed`, `uniform`, `lognormal`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawLatency {
    /// Always this long (a Go duration).
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub fixed: Option<Spanned<String>>,
    /// Uniform between two durations.
    #[serde(default)]
    pub uniform: Option<RawUniform>,
    /// Log-normal with a median and a shape σ.
    #[serde(default)]
    pub lognormal: Option<RawLognormal>,
}

/// Uniform latency.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawUniform {
    /// Shortest.
    #[schemars(with = "DurationText")]
    pub min: Spanned<String>,
    /// Longest (≥ min).
    #[schemars(with = "DurationText")]
    pub max: Spanned<String>,
}

/// Log-normal latency.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawLognormal {
    /// Median.
    #[schemars(with = "DurationText")]
    pub median: Spanned<String>,
    /// Shape σ (≥ 0).
    #[schemars(with = "f64")]
    pub sigma: Spanned<f64>,
}

/// Injected errors for one action class.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawErrors {
    /// Share of calls failed, in [0, 1].
    #[schemars(with = "f64")]
    pub rate: Spanned<f64>,
    /// 500 or 503 (default 503).
    #[serde(default)]
    #[schemars(with = "Option<u16>")]
    pub status: Option<Spanned<u16>>,
}

/// Asynchronous provisioning in the mock cloud.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawProvisioning {
    /// How long a new Database stays `creating` (T_p). Default `5s`.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub database_create: Option<Spanned<String>>,
    /// How long a deleted Database stays `deleting`. Default `3s`.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub database_delete: Option<Spanned<String>>,
}
