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

/// A kind as the API server serves it: group, version, kind, plural and scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServedKind {
    /// API group (`s3.aws.m.loadtest.dev`).
    pub group: &'static str,
    /// Version (`v1beta1`).
    pub version: &'static str,
    /// Kind (`Bucket`).
    pub kind: &'static str,
    /// Plural, the resource's URL segment (`buckets`).
    pub plural: &'static str,
    /// Namespaced (`true`) or cluster-scoped.
    pub namespaced: bool,
}

/// The AWS flavour's kinds, in the order of `provider::aws::kinds::crds`, known also to a
/// build without the `aws` feature, so that a tool built without it can say which feature
/// a kind needs (a test with the feature checks them against the CRDs).
pub const AWS_KINDS: [ServedKind; 6] = [
    aws_kind(
        "aws.m.loadtest.dev",
        "ClusterProviderConfig",
        "clusterproviderconfigs",
        false,
    ),
    aws_kind(
        "aws.m.loadtest.dev",
        "ProviderConfig",
        "providerconfigs",
        true,
    ),
    aws_kind("s3.aws.loadtest.dev", "Bucket", "buckets", false),
    aws_kind("s3.aws.m.loadtest.dev", "Bucket", "buckets", true),
    aws_kind("ec2.aws.m.loadtest.dev", "VPC", "vpcs", true),
    aws_kind("dynamodb.aws.m.loadtest.dev", "Table", "tables", true),
];

const fn aws_kind(
    group: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
) -> ServedKind {
    ServedKind {
        group,
        version: "v1beta1",
        kind,
        plural,
        namespaced,
    }
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
pub(crate) mod tests {
    use super::*;

    /// The names of a CRD's printer columns, in order.
    pub(crate) fn column_names(crd: &CustomResourceDefinition) -> Vec<String> {
        crd.spec.versions[0]
            .additional_printer_columns
            .iter()
            .flatten()
            .map(|c| c.name.clone())
            .collect()
    }

    #[cfg(feature = "aws")]
    #[test]
    fn the_aws_kinds_list_names_the_aws_flavours_crds() {
        let got: Vec<ServedKind> = crate::aws::kinds::crds()
            .iter()
            .map(|c| {
                let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
                ServedKind {
                    group: leak(&c.spec.group),
                    version: leak(&c.spec.versions[0].name),
                    kind: leak(&c.spec.names.kind),
                    plural: leak(&c.spec.names.plural),
                    namespaced: c.spec.scope == "Namespaced",
                }
            })
            .collect();
        assert_eq!(got, AWS_KINDS);
    }

    #[test]
    fn the_managed_kinds_are_namespaced_with_the_four_printer_columns() {
        for crd in crds().into_iter().skip(1).take(3) {
            assert_eq!(crd.spec.scope, "Namespaced");
            assert_eq!(crd.spec.group, GROUP);
            assert_eq!(
                column_names(&crd),
                ["READY", "SYNCED", "EXTERNAL-NAME", "AGE"]
            );
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
