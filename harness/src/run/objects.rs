//! The Kubernetes objects a run creates: its namespace, a Secret and a ProviderConfig per
//! cloud account, and the managed resources of every group. Group, version, kind names,
//! plurals and annotations come from the provider's own CRD types.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, ApiResource, DynamicObject, ObjectMeta, PostParams};
use kube::{Resource, ResourceExt};
use provider::crd::{
    Bucket, CloudKind, Database, ProviderConfig, ProviderConfigSpec, ProviderCredentials, Record,
    SecretKeySelector,
};
use serde_json::json;

use super::cloud::cloud_token;
use super::error::RunError;
use crate::scenario::{Kind, ResourceGroup, Scenario};

/// Every managed kind a scenario can create.
pub const KINDS: [Kind; 3] = [Kind::Bucket, Kind::Database, Kind::Record];

/// What the harness needs of a managed kind: its name, API resource and cloud collection.
#[derive(Clone, Debug)]
pub struct KindInfo {
    /// The Kubernetes kind (`Bucket`).
    pub name: &'static str,
    /// Group, version and plural.
    pub resource: ApiResource,
    /// The mock-cloud collection its calls go to (`buckets`).
    pub collection: &'static str,
}

fn info_of<K: CloudKind>() -> KindInfo {
    KindInfo {
        name: match K::kind(&()) {
            std::borrow::Cow::Borrowed(name) => name,
            std::borrow::Cow::Owned(_) => unreachable!("derived kinds are static"),
        },
        resource: ApiResource::erase::<K>(&()),
        collection: K::COLLECTION,
    }
}

/// The provider's managed kind of a scenario kind.
#[must_use]
pub fn kind_info(kind: Kind) -> KindInfo {
    match kind {
        Kind::Bucket => info_of::<Bucket>(),
        Kind::Database => info_of::<Database>(),
        Kind::Record => info_of::<Record>(),
    }
}

/// The Kubernetes kind of a mock-cloud collection.
#[must_use]
pub fn kind_of_collection(c: mock_cloud::Collection) -> Option<&'static str> {
    KINDS
        .into_iter()
        .map(kind_info)
        .find(|k| k.collection == c.as_str())
        .map(|k| k.name)
}

/// The distinct kinds of a scenario's groups, in a stable order.
#[must_use]
pub fn scenario_kinds(s: &Scenario) -> Vec<Kind> {
    KINDS
        .into_iter()
        .filter(|k| s.groups.iter().any(|g| g.kind == *k))
        .collect()
}

/// The namespace a scenario's resources live in.
#[must_use]
pub fn namespace(s: &Scenario) -> String {
    let name: String = s
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    format!("harness-{}", name.trim_matches('-'))
}

/// The managed resource `index` of `group`.
#[must_use]
pub fn managed_resource(s: &Scenario, group: &ResourceGroup, index: u32) -> DynamicObject {
    let kind = kind_info(group.kind);
    let mut obj = DynamicObject::new(&group.resource_name(index, &s.name), &kind.resource)
        .within(&namespace(s));
    let annotations = group.resource_annotations(index, &s.name);
    if !annotations.is_empty() {
        obj.metadata.annotations = Some(annotations);
    }
    obj.data = json!({
        "spec": {
            "forProvider": group.resource_spec(index, &s.name),
            "providerConfigRef": {"name": group.account},
        }
    });
    if let Some(policies) = &group.management_policies {
        obj.data["spec"]["managementPolicies"] = json!(policies);
    }
    obj
}

/// An object the run created (and deletes at the end of a cluster run).
#[derive(Clone, Debug)]
pub struct Seeded {
    /// Its API resource.
    pub resource: ApiResource,
    /// Its namespace, if namespaced.
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
}

/// Creates `obj`; `Ok(None)` when it exists already (it is used as it is).
async fn create<K>(api: &Api<K>, obj: &K, what: String) -> Result<Option<Seeded>, RunError>
where
    K: Resource<DynamicType = ()> + Clone + serde::Serialize + serde::de::DeserializeOwned,
    K: std::fmt::Debug,
{
    match api.create(&PostParams::default(), obj).await {
        Ok(made) => Ok(Some(Seeded {
            resource: ApiResource::erase::<K>(&()),
            namespace: made.namespace(),
            name: made.name_any(),
        })),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(None),
        Err(source) => Err(RunError::Kube {
            what: format!("create {what}"),
            source,
        }),
    }
}

/// Creates the namespace, and for every cloud account a Secret with its token (in
/// `secret_namespace`, else the run's namespace) and a cluster-scoped ProviderConfig named
/// after the account. Returns what it created, in order (objects that existed already are
/// used as they are and not listed).
///
/// # Errors
/// A create that fails other than with "already exists".
pub async fn seed(
    client: &kube::Client,
    s: &Scenario,
    secret_namespace: Option<&str>,
) -> Result<Vec<Seeded>, RunError> {
    let ns = namespace(s);
    let secret_ns = secret_namespace.unwrap_or(&ns).to_owned();
    let mut created = Vec::new();
    let namespace_obj = Namespace {
        metadata: ObjectMeta {
            name: Some(ns.clone()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    created.extend(
        create(
            &Api::all(client.clone()),
            &namespace_obj,
            format!("namespace {ns}"),
        )
        .await?,
    );
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &secret_ns);
    let configs: Api<ProviderConfig> = Api::all(client.clone());
    for account in &s.cloud.accounts {
        let secret_name = format!("mock-cloud-{}", account.name);
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(secret_name.clone()),
                namespace: Some(secret_ns.clone()),
                ..ObjectMeta::default()
            },
            data: Some(BTreeMap::from([(
                "token".to_owned(),
                ByteString(cloud_token(&account.name).into_bytes()),
            )])),
            ..Secret::default()
        };
        created.extend(
            create(
                &secrets,
                &secret,
                format!("secret {secret_ns}/{secret_name}"),
            )
            .await?,
        );
        let config = ProviderConfig::new(
            &account.name,
            ProviderConfigSpec {
                account: account.name.clone(),
                credentials: ProviderCredentials {
                    secret_ref: SecretKeySelector {
                        namespace: secret_ns.clone(),
                        name: secret_name,
                        key: "token".to_owned(),
                    },
                },
            },
        );
        created.extend(
            create(
                &configs,
                &config,
                format!("provider config {}", account.name),
            )
            .await?,
        );
    }
    Ok(created)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_come_from_the_providers_crd_types() {
        let bucket = kind_info(Kind::Bucket);
        assert_eq!(bucket.name, "Bucket");
        assert_eq!(bucket.resource.group, provider::crd::GROUP);
        assert_eq!(bucket.resource.version, provider::crd::VERSION);
        assert_eq!(bucket.resource.plural, "buckets");
        assert_eq!(
            kind_of_collection(mock_cloud::Collection::Databases),
            Some("Database")
        );
    }
}
