//! The AWS flavour's custom resources, shaped like provider-upjet-aws's v2 kinds in groups of
//! ours: the managed kinds `Bucket` (cluster-scoped in `s3.aws.loadtest.dev`, namespaced in
//! `s3.aws.m.loadtest.dev`), `VPC` (`ec2.aws.m.loadtest.dev`) and `Table`
//! (`dynamodb.aws.m.loadtest.dev`), all `v1beta1`; and the ProviderConfigs they use,
//! `ClusterProviderConfig` (cluster-scoped) and `ProviderConfig` (namespaced), in
//! `aws.m.loadtest.dev/v1beta1`.
//!
//! Each managed kind has `spec.forProvider` (the API fields of [`super::bucket`],
//! `super::vpc` and [`super::table`]), `spec.providerConfigRef` (`{kind, name}`, by default
//! the ClusterProviderConfig named `default`) and a status of `atProvider` (what the last
//! Observe read) and the `Ready` and `Synced` conditions.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::Api;
use kube::{CustomResource, CustomResourceExt};
use limiter::crossplane::Scope;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::bucket::{BucketObservation, BucketParameters};
use super::config::ProviderConfigSpec;
use super::table::{TableObservation, TableParameters};
use super::vpc::{VpcObservation, VpcParameters};
use crate::crd::common::{ManagedStatus, managed_kind};
use crate::crd::managed::Managed;

/// The group of the ProviderConfigs.
pub const CONFIG_GROUP: &str = "aws.m.loadtest.dev";
/// The version of every AWS kind.
pub const VERSION: &str = "v1beta1";
/// `spec.providerConfigRef.kind` of a ClusterProviderConfig.
pub const CLUSTER_PROVIDER_CONFIG: &str = "ClusterProviderConfig";
/// `spec.providerConfigRef.kind` of a namespaced ProviderConfig.
pub const PROVIDER_CONFIG: &str = "ProviderConfig";

fn default_kind() -> String {
    CLUSTER_PROVIDER_CONFIG.to_owned()
}

fn default_name() -> String {
    "default".to_owned()
}

/// `spec.providerConfigRef` of an AWS kind: crossplane-runtime v2's `{kind, name}`. A
/// `ProviderConfig` is looked up in the resource's namespace; a cluster-scoped resource can
/// use only a `ClusterProviderConfig`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AwsProviderConfigReference {
    /// `ClusterProviderConfig` (default) or `ProviderConfig`.
    #[serde(default = "default_kind")]
    pub kind: String,
    /// Name of the referenced object.
    #[serde(default = "default_name")]
    pub name: String,
}

impl Default for AwsProviderConfigReference {
    fn default() -> Self {
        AwsProviderConfigReference {
            kind: default_kind(),
            name: default_name(),
        }
    }
}

/// An AWS ProviderConfig kind: upjet's spec, its categories and printer columns.
macro_rules! provider_config {
    ($(#[$attr:meta])* $spec:ident, $kind:literal $(, $namespaced:ident)?) => {
        $(#[$attr])*
        #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[kube(
            group = "aws.m.loadtest.dev",
            version = "v1beta1",
            kind = $kind,
            $($namespaced,)?
            category = "providerconfig",
            category = "aws",
            printcolumn = r#"{"name":"SOURCE","type":"string","jsonPath":".spec.credentials.source"}"#,
            printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
        )]
        pub struct $spec {
            /// upjet's ProviderConfig spec.
            #[serde(flatten)]
            pub config: ProviderConfigSpec,
        }
    };
}

provider_config!(
    /// A cluster-scoped ProviderConfig of the AWS kinds (upjet's, field for field where used).
    ClusterProviderConfigSpec,
    "ClusterProviderConfig"
);
provider_config!(
    /// A namespaced ProviderConfig of the AWS kinds, for resources of its namespace.
    NamespacedProviderConfigSpec,
    "ProviderConfig",
    namespaced
);

/// The status of a Bucket.
pub type BucketStatus = ManagedStatus<BucketObservation>;
/// The status of a VPC.
pub type VpcStatus = ManagedStatus<VpcObservation>;
/// The status of a Table.
pub type TableStatus = ManagedStatus<TableObservation>;

managed_kind! {
    /// An S3 bucket, cluster-scoped (v2 providers' legacy `s3.aws.upbound.io` group).
    kube(
        group = "s3.aws.loadtest.dev",
        version = "v1beta1",
        kind = "Bucket",
        root = "ClusterBucket",
        status = "BucketStatus",
        category = "managed",
        category = "aws"
    )
    pub struct ClusterBucketSpec {
        /// The desired bucket.
        pub for_provider: BucketParameters,
        /// The ClusterProviderConfig with the endpoint and credentials.
        #[serde(default)]
        pub provider_config_ref: AwsProviderConfigReference,
    }
}

managed_kind! {
    /// An S3 bucket, namespaced (v2 providers' `s3.aws.m.upbound.io` group).
    kube(
        group = "s3.aws.m.loadtest.dev",
        version = "v1beta1",
        kind = "Bucket",
        root = "NamespacedBucket",
        namespaced,
        status = "BucketStatus",
        category = "managed",
        category = "aws"
    )
    pub struct NamespacedBucketSpec {
        /// The desired bucket.
        pub for_provider: BucketParameters,
        /// The ProviderConfig (in this namespace) or ClusterProviderConfig.
        #[serde(default)]
        pub provider_config_ref: AwsProviderConfigReference,
    }
}

managed_kind! {
    /// An EC2 VPC (namespaced, `ec2.aws.m.upbound.io`'s shape). The cloud assigns its ID, which
    /// becomes the external name at Create.
    kube(
        group = "ec2.aws.m.loadtest.dev",
        version = "v1beta1",
        kind = "VPC",
        root = "Vpc",
        plural = "vpcs",
        namespaced,
        status = "VpcStatus",
        category = "managed",
        category = "aws"
    )
    pub struct VpcSpec {
        /// The desired VPC.
        pub for_provider: VpcParameters,
        /// The ProviderConfig (in this namespace) or ClusterProviderConfig.
        #[serde(default)]
        pub provider_config_ref: AwsProviderConfigReference,
    }
}

managed_kind! {
    /// A DynamoDB table (namespaced, `dynamodb.aws.m.upbound.io`'s shape).
    kube(
        group = "dynamodb.aws.m.loadtest.dev",
        version = "v1beta1",
        kind = "Table",
        namespaced,
        status = "TableStatus",
        category = "managed",
        category = "aws"
    )
    pub struct TableSpec {
        /// The desired table.
        pub for_provider: TableParameters,
        /// The ProviderConfig (in this namespace) or ClusterProviderConfig.
        #[serde(default)]
        pub provider_config_ref: AwsProviderConfigReference,
    }
}

/// What the AWS controllers need of a managed kind beyond [`Managed`].
pub trait AwsKind: Managed {
    /// The region of `spec.forProvider`.
    fn region(&self) -> &str;
    /// `spec.providerConfigRef`.
    fn config_ref(&self) -> &AwsProviderConfigReference;
}

macro_rules! aws_kind {
    ($kind:ty, $at:ty, $label:literal, $scope:expr, $name_as_external:literal, $api:expr) => {
        impl Managed for $kind {
            type AtProvider = $at;
            const LABEL: &'static str = $label;
            const SCOPE: Scope = $scope;
            const NAME_AS_EXTERNAL_NAME: bool = $name_as_external;

            fn api(client: kube::Client, namespace: &str) -> Api<Self> {
                $api(client, namespace)
            }

            fn managed_status(&self) -> Option<&ManagedStatus<$at>> {
                self.status.as_ref()
            }

            fn managed_status_mut(&mut self) -> &mut ManagedStatus<$at> {
                self.status.get_or_insert_with(ManagedStatus::default)
            }
        }

        impl AwsKind for $kind {
            fn region(&self) -> &str {
                &self.spec.for_provider.region
            }

            fn config_ref(&self) -> &AwsProviderConfigReference {
                &self.spec.provider_config_ref
            }
        }
    };
}

fn cluster<K: kube::Resource<DynamicType = ()>>(client: kube::Client, _: &str) -> Api<K> {
    Api::all(client)
}

fn namespaced<K>(client: kube::Client, namespace: &str) -> Api<K>
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>,
{
    Api::namespaced(client, namespace)
}

aws_kind!(
    ClusterBucket,
    BucketObservation,
    "Bucket.s3.aws.loadtest.dev",
    Scope::Cluster,
    true,
    cluster
);
aws_kind!(
    NamespacedBucket,
    BucketObservation,
    "Bucket.s3.aws.m.loadtest.dev",
    Scope::Namespaced,
    true,
    namespaced
);
aws_kind!(
    Vpc,
    VpcObservation,
    "VPC.ec2.aws.m.loadtest.dev",
    Scope::Namespaced,
    false,
    namespaced
);
aws_kind!(
    Table,
    TableObservation,
    "Table.dynamodb.aws.m.loadtest.dev",
    Scope::Namespaced,
    true,
    namespaced
);

/// The AWS flavour's CRDs, in a stable order: ClusterProviderConfig, ProviderConfig, the
/// cluster-scoped Bucket, the namespaced Bucket, VPC, Table.
#[must_use]
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        ClusterProviderConfig::crd(),
        ProviderConfig::crd(),
        ClusterBucket::crd(),
        NamespacedBucket::crd(),
        Vpc::crd(),
        Table::crd(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kinds_have_upjets_groups_scopes_and_columns() {
        let got: Vec<(String, String, String)> = crds()
            .into_iter()
            .map(|c| (c.spec.group, c.spec.names.kind, c.spec.scope))
            .collect();
        let want = [
            ("aws.m.loadtest.dev", "ClusterProviderConfig", "Cluster"),
            ("aws.m.loadtest.dev", "ProviderConfig", "Namespaced"),
            ("s3.aws.loadtest.dev", "Bucket", "Cluster"),
            ("s3.aws.m.loadtest.dev", "Bucket", "Namespaced"),
            ("ec2.aws.m.loadtest.dev", "VPC", "Namespaced"),
            ("dynamodb.aws.m.loadtest.dev", "Table", "Namespaced"),
        ];
        let want: Vec<(String, String, String)> = want
            .iter()
            .map(|(g, k, s)| ((*g).to_owned(), (*k).to_owned(), (*s).to_owned()))
            .collect();
        assert_eq!(got, want);
        for crd in crds().into_iter().skip(2) {
            let version = &crd.spec.versions[0];
            assert!(version.subresources.is_some(), "{}", crd.spec.names.kind);
            assert_eq!(
                crate::crd::tests::column_names(&crd),
                ["READY", "SYNCED", "EXTERNAL-NAME", "AGE"]
            );
        }
    }

    #[test]
    fn a_resource_uses_the_cluster_provider_config_named_default_unless_told() {
        let spec: TableSpec = serde_json::from_str(
            r#"{"forProvider": {"region": "us-east-1", "billingMode": "PAY_PER_REQUEST",
                "attribute": [{"name": "id", "type": "S"}], "hashKey": "id"}}"#,
        )
        .expect("parses");
        assert_eq!(
            spec.provider_config_ref,
            AwsProviderConfigReference::default()
        );
        assert_eq!(spec.provider_config_ref.kind, "ClusterProviderConfig");
        let pc: ClusterProviderConfigSpec = serde_json::from_str(
            r#"{"credentials": {"source": "Secret", "secretRef": {"namespace": "ns", "name": "aws", "key": "credentials"}},
                "s3_use_path_style": true}"#,
        )
        .expect("parses");
        assert!(pc.config.s3_use_path_style);
        assert_eq!(pc.config.validate(), Ok(()));
    }
}
