//! The custom resources: the managed kinds [`Bucket`], [`Database`] and [`Record`], and
//! [`ProviderConfig`]; the [`Managed`] trait the reconciler is generic over; and the CRD
//! manifests (`provider crds`).

pub(crate) mod common;
mod kinds;
pub(crate) mod managed;
mod provider_config;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

pub use common::{
    AtProvider, CREATE_FAILED_ANNOTATION, CREATE_PENDING_ANNOTATION, CREATE_SUCCEEDED_ANNOTATION,
    Condition, EXTERNAL_NAME_ANNOTATION, FINALIZER, GROUP, ManagedStatus, PAUSED_ANNOTATION,
    ProviderConfigReference, SecretKeySelector, VERSION,
};
pub use kinds::{
    Bucket, BucketParameters, BucketSpec, Database, DatabaseParameters, DatabaseSpec, Record,
    RecordParameters, RecordSpec, SpecError,
};
pub use managed::{CloudKind, Managed};
pub use provider_config::{ProviderConfig, ProviderConfigSpec, ProviderCredentials};

/// Every CRD of the provider, in a stable order: ProviderConfig, Bucket, Database, Record,
/// then, with the `aws` feature, the AWS flavour's (`provider::aws::kinds::crds`).
#[must_use]
pub fn crds() -> Vec<CustomResourceDefinition> {
    #[allow(unused_mut)]
    let mut all = vec![
        ProviderConfig::crd(),
        Bucket::crd(),
        Database::crd(),
        Record::crd(),
    ];
    #[cfg(feature = "aws")]
    all.extend(crate::aws::kinds::crds());
    all
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
        for crd in crds().into_iter().skip(1).take(3) {
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
