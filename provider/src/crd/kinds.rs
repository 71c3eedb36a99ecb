//! The three managed kinds: `Bucket`, `Database` and `Record`, and what they send the cloud.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{ManagedStatus, ProviderConfigReference, managed_kind};

/// A `spec.forProvider` value the cloud cannot take; the resource gets `Synced=False` with
/// this message and is retried on the per-item backoff.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid spec.forProvider.{field}: {message}")]
pub struct SpecError {
    /// The field, under `spec.forProvider`.
    pub field: &'static str,
    /// What is wrong with it.
    pub message: String,
}

fn one_of(field: &'static str, value: &str, allowed: &[&str]) -> Result<(), SpecError> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(SpecError {
            field,
            message: format!("{value:?} is not one of {}", allowed.join(", ")),
        })
    }
}

fn non_empty(field: &'static str, value: &str) -> Result<(), SpecError> {
    if value.trim().is_empty() {
        Err(SpecError {
            field,
            message: "must not be empty".to_owned(),
        })
    } else {
        Ok(())
    }
}

fn in_range(field: &'static str, value: u32, min: u32, max: u32) -> Result<(), SpecError> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(SpecError {
            field,
            message: format!("{value} is not between {min} and {max}"),
        })
    }
}

managed_kind! {
    /// A storage bucket in the mock cloud (created at once).
    kube(
        group = "mockcloud.example.org",
        version = "v1alpha1",
        kind = "Bucket",
        namespaced,
        status = "ManagedStatus",
        category = "managed",
        category = "mockcloud"
    )
    pub struct BucketSpec {
        /// The desired cloud resource.
        pub for_provider: BucketParameters,
        /// The ProviderConfig with the account and credentials.
        #[serde(default)]
        pub provider_config_ref: ProviderConfigReference,
        /// What the provider may do (crossplane's `managementPolicies`): absent or `["*"]` for
        /// everything, `["Observe"]` to only observe, `[]` to pause; otherwise any of
        /// `Observe`, `Create`, `Update`, `Delete`, `LateInitialize`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub management_policies: Option<Vec<String>>,
    }
}

/// `Bucket.spec.forProvider`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BucketParameters {
    /// Region, such as `eu-west-1`.
    pub region: String,
    /// Keep old versions of objects.
    #[serde(default)]
    pub versioning: bool,
    /// `STANDARD` (default), `NEARLINE`, `COLDLINE` or `ARCHIVE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_class: Option<String>,
}

impl BucketSpec {
    /// A plain bucket in `region`: no versioning, the default storage class, the default
    /// ProviderConfig, every management policy.
    #[must_use]
    pub fn in_region(region: &str) -> Self {
        BucketSpec {
            for_provider: BucketParameters {
                region: region.to_owned(),
                versioning: false,
                storage_class: None,
            },
            provider_config_ref: ProviderConfigReference::default(),
            management_policies: None,
        }
    }
}

impl BucketParameters {
    /// Checks the values the cloud would refuse.
    ///
    /// # Errors
    /// The first invalid field.
    pub fn validate(&self) -> Result<(), SpecError> {
        non_empty("region", &self.region)?;
        if let Some(class) = &self.storage_class {
            one_of(
                "storageClass",
                class,
                &["STANDARD", "NEARLINE", "COLDLINE", "ARCHIVE"],
            )?;
        }
        Ok(())
    }
}

managed_kind! {
    /// A database in the mock cloud (provisioned asynchronously).
    kube(
        group = "mockcloud.example.org",
        version = "v1alpha1",
        kind = "Database",
        namespaced,
        status = "ManagedStatus",
        category = "managed",
        category = "mockcloud"
    )
    pub struct DatabaseSpec {
        /// The desired cloud resource.
        pub for_provider: DatabaseParameters,
        /// The ProviderConfig with the account and credentials.
        #[serde(default)]
        pub provider_config_ref: ProviderConfigReference,
        /// What the provider may do (crossplane's `managementPolicies`): absent or `["*"]` for
        /// everything, `["Observe"]` to only observe, `[]` to pause; otherwise any of
        /// `Observe`, `Create`, `Update`, `Delete`, `LateInitialize`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub management_policies: Option<Vec<String>>,
    }
}

/// `Database.spec.forProvider`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseParameters {
    /// `postgres` or `mysql`.
    pub engine: String,
    /// Engine version, such as `16`.
    pub version: String,
    /// Storage in GiB, 1 to 16384.
    pub size_gb: u32,
}

impl DatabaseParameters {
    /// Checks the values the cloud would refuse.
    ///
    /// # Errors
    /// The first invalid field.
    pub fn validate(&self) -> Result<(), SpecError> {
        one_of("engine", &self.engine, &["postgres", "mysql"])?;
        non_empty("version", &self.version)?;
        in_range("sizeGb", self.size_gb, 1, 16_384)
    }
}

managed_kind! {
    /// A DNS record in the mock cloud (created at once).
    kube(
        group = "mockcloud.example.org",
        version = "v1alpha1",
        kind = "Record",
        namespaced,
        status = "ManagedStatus",
        category = "managed",
        category = "mockcloud"
    )
    pub struct RecordSpec {
        /// The desired cloud resource.
        pub for_provider: RecordParameters,
        /// The ProviderConfig with the account and credentials.
        #[serde(default)]
        pub provider_config_ref: ProviderConfigReference,
        /// What the provider may do (crossplane's `managementPolicies`): absent or `["*"]` for
        /// everything, `["Observe"]` to only observe, `[]` to pause; otherwise any of
        /// `Observe`, `Create`, `Update`, `Delete`, `LateInitialize`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub management_policies: Option<Vec<String>>,
    }
}

/// `Record.spec.forProvider`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordParameters {
    /// `A`, `AAAA`, `CNAME` or `TXT`.
    #[serde(rename = "type")]
    pub type_: String,
    /// The record's value.
    pub value: String,
    /// Time to live in seconds, 1 to 86400.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u32>,
}

impl RecordParameters {
    /// Checks the values the cloud would refuse.
    ///
    /// # Errors
    /// The first invalid field.
    pub fn validate(&self) -> Result<(), SpecError> {
        one_of("type", &self.type_, &["A", "AAAA", "CNAME", "TXT"])?;
        non_empty("value", &self.value)?;
        if let Some(ttl) = self.ttl {
            in_range("ttl", ttl, 1, 86_400)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_of_an_unknown_type_is_refused_with_the_field_named() {
        let p = RecordParameters {
            type_: "MX".into(),
            value: "mail".into(),
            ttl: None,
        };
        assert_eq!(
            p.validate().unwrap_err().to_string(),
            r#"invalid spec.forProvider.type: "MX" is not one of A, AAAA, CNAME, TXT"#
        );
    }

    #[test]
    fn valid_parameters_pass() {
        let db = DatabaseParameters {
            engine: "postgres".into(),
            version: "16".into(),
            size_gb: 0,
        };
        assert_eq!(db.validate().unwrap_err().field, "sizeGb");
        let bucket = BucketParameters {
            region: "eu".into(),
            versioning: true,
            storage_class: Some("ARCHIVE".into()),
        };
        assert_eq!(bucket.validate(), Ok(()));
    }
}
