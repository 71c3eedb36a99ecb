//! The [`Managed`] trait the reconciler is generic over, and [`CloudKind`], what the
//! mock-cloud kinds add to it.

use std::fmt::Debug;

use kube::Resource;
use kube::api::Api;
use limiter::crossplane::Scope;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::common::{AtProvider, ManagedStatus};
use super::kinds::{Bucket, Database, Record, SpecError};

/// A managed resource kind: what the generic reconciler needs to know about it. Implemented
/// by the mock-cloud kinds here and, with the `aws` feature, by the AWS kinds of
/// `provider::aws::kinds`, namespaced or cluster-scoped.
pub trait Managed:
    Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// What `status.atProvider` holds.
    type AtProvider: Clone + Debug + PartialEq + Serialize + DeserializeOwned + Send + Sync;

    /// The kind's label in metrics and logs: `Bucket`, `Database` and `Record` for the
    /// mock-cloud kinds, `Kind.group` for the others.
    const LABEL: &'static str;

    /// The scope that picks the controller's global bucket with `--scoped-buckets`.
    const SCOPE: Scope;

    /// Whether the reconciler names the cloud resource after the object before creating it
    /// (crossplane-runtime's `NameAsExternalName`). `false` for kinds whose identifier the
    /// cloud assigns (a VPC's `vpc-…`): their Create returns the external name.
    const NAME_AS_EXTERNAL_NAME: bool = true;

    /// The API of objects of this kind in `namespace` (ignored for cluster-scoped kinds).
    fn api(client: kube::Client, namespace: &str) -> Api<Self>;

    /// The status, if any was written.
    fn managed_status(&self) -> Option<&ManagedStatus<Self::AtProvider>>;

    /// The status, created empty if missing.
    fn managed_status_mut(&mut self) -> &mut ManagedStatus<Self::AtProvider>;

    /// `spec.managementPolicies`; `None` (the default) allows everything.
    fn management_policies(&self) -> Option<&[String]> {
        None
    }
}

/// A mock-cloud kind: a [`Managed`] kind kept in a mock-cloud collection through its JSON
/// API.
pub trait CloudKind: Managed<AtProvider = AtProvider> {
    /// The mock-cloud collection (`buckets`, `databases`, `records`).
    const COLLECTION: &'static str;

    /// `spec.providerConfigRef.name`.
    fn provider_config_name(&self) -> &str;

    /// The cloud's `spec` for this resource (`spec.forProvider` as JSON), once validated.
    ///
    /// # Errors
    /// A value the cloud cannot take.
    fn cloud_spec(&self) -> Result<serde_json::Value, SpecError>;
}

macro_rules! managed {
    ($kind:ty, $collection:literal, $label:literal) => {
        impl Managed for $kind {
            type AtProvider = AtProvider;
            const LABEL: &'static str = $label;
            const SCOPE: Scope = Scope::Namespaced;

            fn api(client: kube::Client, namespace: &str) -> Api<Self> {
                Api::namespaced(client, namespace)
            }

            fn managed_status(&self) -> Option<&ManagedStatus> {
                self.status.as_ref()
            }

            fn managed_status_mut(&mut self) -> &mut ManagedStatus {
                self.status.get_or_insert_with(ManagedStatus::default)
            }

            fn management_policies(&self) -> Option<&[String]> {
                self.spec.management_policies.as_deref()
            }
        }

        impl CloudKind for $kind {
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
        }
    };
}

managed!(Bucket, "buckets", "Bucket");
managed!(Database, "databases", "Database");
managed!(Record, "records", "Record");
