//! The custom resources: the managed kinds [`Bucket`], [`Database`] and [`Record`], and
//! [`ProviderConfig`]; the [`Managed`] trait the reconciler is generic over; and the CRD
//! manifests (`provider crds`).

mod common;
mod kinds;
mod provider_config;

use std::fmt::Debug;

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{CustomResourceExt, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use common::{
    AtProvider, CREATE_FAILED_ANNOTATION, CREATE_PENDING_ANNOTATION, CREATE_SUCCEEDED_ANNOTATION,
    Condition, EXTERNAL_NAME_ANNOTATION, FINALIZER, GROUP, ManagedStatus, PAUSED_ANNOTATION,
    ProviderConfigReference, SecretKeySelector, VERSION,
};
pub use kinds::{
    Bucket, BucketParameters, BucketSpec, Database, DatabaseParameters, DatabaseSpec, Record,
    RecordParameters, RecordSpec, SpecError,
};
pub use provider_config::{ProviderConfig, ProviderConfigSpec, ProviderCredentials};

/// A managed resource kind: what the generic reconciler needs to know about it.
pub trait Managed:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + Debug
    + Serialize
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
    /// The mock-cloud collection (`buckets`, `databases`, `records`).
    const COLLECTION: &'static str;

    /// `spec.providerConfigRef.name`.
    fn provider_config_name(&self) -> &str;

    /// The cloud's `spec` for this resource (`spec.forProvider` as JSON), once validated.
    ///
    /// # Errors
    /// A value the cloud cannot take.
    fn cloud_spec(&self) -> Result<serde_json::Value, SpecError>;

    /// The status, if any was written.
    fn managed_status(&self) -> Option<&ManagedStatus>;

    /// The status, created empty if missing.
    fn managed_status_mut(&mut self) -> &mut ManagedStatus;
}

macro_rules! managed {
    ($kind:ty, $collection:literal) => {
        impl Managed for $kind {
            const COLLECTION: &'static str = $collection;

            fn provider_config_name(&self) -> &str {
                &self.spec.provider_config_ref.name
            }

            fn cloud_spec(&self) -> Result<serde_json::Value, SpecError> {
                self.spec.for_provider.validate()?;
                serde_json::to_value(&self.spec.for_provider).map_err(|e| SpecError {
                    field: "*",
                    message: e.to_string(),
                })
            }

            fn managed_status(&self) -> Option<&ManagedStatus> {
                self.status.as_ref()
            }

            fn managed_status_mut(&mut self) -> &mut ManagedStatus {
                self.status.get_or_insert_with(ManagedStatus::default)
            }
        }
    };
}

managed!(Bucket, "buckets");
managed!(Database, "databases");
managed!(Record, "records");

/// Every CRD of the provider, in a stable order: ProviderConfig, Bucket, Database, Record.
#[must_use]
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        ProviderConfig::crd(),
        Bucket::crd(),
        Database::crd(),
        Record::crd(),
    ]
}

/// A CRD's file name in `ci/manifests/crds/`: `<group>_<plural>.yaml`, as Crossplane
/// packages name them.
#[must_use]
pub fn crd_file_name(crd: &CustomResourceDefinition) -> String {
    format!("{}_{}.yaml", crd.spec.group, crd.spec.names.plural)
}

/// One CRD as a YAML document.
///
/// # Errors
/// If the serializer fails (it does not for these types).
pub fn crd_yaml(crd: &CustomResourceDefinition) -> Result<String, serde_saphyr::SerializeError> {
    serde_saphyr::to_string(crd)
}

/// Every CRD as one multi-document YAML stream (what `provider crds` prints).
///
/// # Errors
/// If the serializer fails (it does not for these types).
pub fn crds_yaml() -> Result<String, serde_saphyr::SerializeError> {
    let mut out = String::new();
    for crd in crds() {
        out.push_str("---\n");
        out.push_str(&crd_yaml(&crd)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_managed_kinds_are_namespaced_with_the_four_printer_columns() {
        for crd in crds().into_iter().skip(1) {
            assert_eq!(crd.spec.scope, "Namespaced");
            assert_eq!(crd.spec.group, GROUP);
            let columns: Vec<String> = crd.spec.versions[0]
                .additional_printer_columns
                .iter()
                .flatten()
                .map(|c| c.name.clone())
                .collect();
            assert_eq!(columns, ["READY", "SYNCED", "EXTERNAL-NAME", "AGE"]);
            assert!(crd.spec.versions[0].subresources.is_some());
        }
        assert_eq!(crds()[0].spec.scope, "Cluster");
    }

    #[test]
    fn crd_files_are_named_by_group_and_plural() {
        assert_eq!(
            crd_file_name(&Bucket::crd()),
            "mockcloud.example.org_buckets.yaml"
        );
    }
}
