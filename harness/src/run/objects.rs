//! The Kubernetes objects a run creates: its namespace, a Secret and a ProviderConfig per
//! cloud account, and the managed resources of every group. Group, version, kind names,
//! plurals and annotations come from the provider's own CRD types.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ObjectMeta, PostParams};
use kube::{Resource, ResourceExt};
use provider::crd::{
    Bucket, CloudKind, Database, ProviderConfig, ProviderConfigSpec, ProviderCredentials, Record,
    SecretKeySelector,
};
use serde_json::json;

use super::cloud::cloud_token;
use super::error::RunError;
use crate::scenario::{GroupKind, Kind, ResourceGroup, Scenario, SceneObject};

/// Every short kind a scenario can create.
pub const KINDS: [Kind; 3] = [Kind::Bucket, Kind::Database, Kind::Record];

/// What the harness needs of a managed kind in a run: its name in reports, API resource,
/// cloud collection, where its objects live and when one is Ready.
#[derive(Clone, Debug)]
pub struct KindInfo {
    /// The name reports key resources by: `Bucket` for a short kind,
    /// `Bucket.s3.aws.m.loadtest.dev` for the others.
    pub name: String,
    /// Group, version, kind and plural.
    pub resource: ApiResource,
    /// The mock-cloud collection its calls go to (`buckets`); none for the AWS kinds.
    pub collection: Option<&'static str>,
    /// Its objects' namespace; `None` for a cluster-scoped kind.
    pub namespace: Option<String>,
    /// The conditions (type, status) a Ready object has.
    pub ready: Vec<(String, String)>,
}

impl KindInfo {
    /// An API for its objects.
    #[must_use]
    pub fn api(&self, client: &kube::Client) -> Api<DynamicObject> {
        match &self.namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &self.resource),
            None => Api::all_with(client.clone(), &self.resource),
        }
    }
}

fn resource_of<K: CloudKind>() -> ApiResource {
    ApiResource::erase::<K>(&())
}

/// The API resource of a group's kind.
#[must_use]
pub fn resource(kind: &GroupKind) -> ApiResource {
    match kind {
        GroupKind::Short(Kind::Bucket) => resource_of::<Bucket>(),
        GroupKind::Short(Kind::Database) => resource_of::<Database>(),
        GroupKind::Short(Kind::Record) => resource_of::<Record>(),
        GroupKind::Api(a) => a.resource(),
    }
}

/// The managed kind of a short kind in the run's namespace, Ready when `Ready` is True.
#[must_use]
pub fn kind_info(kind: Kind, namespace: &str) -> KindInfo {
    let kind = GroupKind::Short(kind);
    KindInfo {
        name: kind.to_string(),
        resource: resource(&kind),
        collection: kind.collection(),
        namespace: Some(namespace.to_owned()),
        ready: vec![("Ready".to_owned(), "True".to_owned())],
    }
}

/// The managed kind of `group` in a run of `s`.
#[must_use]
pub fn group_kind_info(s: &Scenario, group: &ResourceGroup) -> KindInfo {
    KindInfo {
        name: group.kind.to_string(),
        resource: resource(&group.kind),
        collection: group.kind.collection(),
        namespace: group
            .kind
            .namespaced()
            .then(|| group.namespace.clone().unwrap_or_else(|| namespace(s))),
        ready: group.ready.clone(),
    }
}

/// The Kubernetes kind of a mock-cloud collection.
#[must_use]
pub fn kind_of_collection(c: mock_cloud::Collection) -> Option<&'static str> {
    KINDS
        .into_iter()
        .find(|k| k.collection() == c.as_str())
        .map(|k| match k {
            Kind::Bucket => "Bucket",
            Kind::Database => "Database",
            Kind::Record => "Record",
        })
}

/// The distinct kinds (and namespaces) of a scenario's groups, in the order of their first
/// group.
#[must_use]
pub fn scenario_kinds(s: &Scenario) -> Vec<KindInfo> {
    let mut out: Vec<KindInfo> = Vec::new();
    for g in &s.groups {
        let info = group_kind_info(s, g);
        if !out
            .iter()
            .any(|k| k.name == info.name && k.namespace == info.namespace)
        {
            out.push(info);
        }
    }
    // The managed resources XRs compose are the provider's as much as a group's.
    for info in composed_kinds(s) {
        if !out
            .iter()
            .any(|k| k.name == info.name && k.namespace == info.namespace)
        {
            out.push(info);
        }
    }
    out
}

/// The managed kinds the XR groups' Compositions compose that the embedded provider
/// serves (the sample provider's short kinds), in the run's namespace.
#[must_use]
pub fn composed_kinds(s: &Scenario) -> Vec<KindInfo> {
    let ns = namespace(s);
    s.composites
        .composed_kinds()
        .into_iter()
        .filter_map(|(api_version, kind)| {
            let (group, _) = api_version.split_once('/')?;
            if group != provider::crd::GROUP {
                return None;
            }
            let short = match kind.as_str() {
                "Bucket" => Kind::Bucket,
                "Database" => Kind::Database,
                "Record" => Kind::Record,
                _ => return None,
            };
            Some(kind_info(short, &ns))
        })
        .collect()
}

/// `text` as a DNS-1123 label's characters: ASCII letters and digits lowercased, every
/// other character `-` (the caller trims and shortens it).
#[must_use]
pub fn dns_label_chars(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// The namespace a scenario's resources live in.
#[must_use]
pub fn namespace(s: &Scenario) -> String {
    format!("harness-{}", dns_label_chars(&s.name).trim_matches('-'))
}

/// The managed resource `index` of `group`: `spec.forProvider` from the group's spec, a
/// `providerConfigRef` naming the account's ProviderConfig for the short kinds, then the
/// group's template (labels, annotations, spec fields) over it.
#[must_use]
pub fn managed_resource(s: &Scenario, group: &ResourceGroup, index: u32) -> DynamicObject {
    let kind = group_kind_info(s, group);
    let mut obj = DynamicObject::new(&group.resource_name(index, &s.name), &kind.resource);
    if let Some(ns) = &kind.namespace {
        obj = obj.within(ns);
    }
    obj.data = json!({"spec": {"forProvider": group.resource_spec(index, &s.name)}});
    if matches!(group.kind, GroupKind::Short(_)) {
        obj.data["spec"]["providerConfigRef"] = json!({"name": group.account});
    }
    if let Some(policies) = &group.management_policies {
        obj.data["spec"]["managementPolicies"] = json!(policies);
    }
    let template = group.resource_template(index, &s.name);
    if let Some(meta) = template.get("metadata") {
        let strings = |key: &str| -> BTreeMap<String, String> {
            meta.get(key)
                .and_then(|m| serde_json::from_value(m.clone()).ok())
                .unwrap_or_default()
        };
        let labels = strings("labels");
        if !labels.is_empty() {
            obj.metadata.labels = Some(labels);
        }
        let mut annotations = strings("annotations");
        annotations.extend(group.resource_annotations(index, &s.name));
        if !annotations.is_empty() {
            obj.metadata.annotations = Some(annotations);
        }
    } else {
        let annotations = group.resource_annotations(index, &s.name);
        if !annotations.is_empty() {
            obj.metadata.annotations = Some(annotations);
        }
    }
    if let Some(spec) = template.get("spec").and_then(|v| v.as_object()) {
        for (k, v) in spec {
            obj.data["spec"][k] = v.clone();
        }
    }
    obj
}

/// A scenario object (a ProviderConfig, a Secret) as the run creates it: namespaced ones
/// default to the run's namespace.
#[must_use]
pub fn scene_object(s: &Scenario, o: &SceneObject) -> (ApiResource, Option<String>, DynamicObject) {
    let resource = o.kind.resource();
    let mut body = o.body.clone();
    let namespace = o.kind.namespaced.then(|| {
        body.pointer("/metadata/namespace")
            .and_then(|v| v.as_str())
            .map_or_else(|| namespace(s), str::to_owned)
    });
    let name = body
        .pointer("/metadata/name")
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    let mut obj = DynamicObject::new(name, &resource);
    if let Some(ns) = &namespace {
        obj = obj.within(ns);
    }
    let strings = |key: &str| -> Option<BTreeMap<String, String>> {
        body.pointer(&format!("/metadata/{key}"))
            .and_then(|m| serde_json::from_value(m.clone()).ok())
    };
    obj.metadata.labels = strings("labels");
    obj.metadata.annotations = strings("annotations");
    if let Some(map) = body.as_object_mut() {
        for key in ["apiVersion", "kind", "metadata"] {
            map.remove(key);
        }
    }
    obj.data = body;
    (resource, namespace, obj)
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

/// Creates the namespace (and the groups' own), and for every cloud account a Secret with
/// its token (in `secret_namespace`, else the run's namespace) and a cluster-scoped
/// ProviderConfig named after the account, then the scenario's objects in file order.
/// Returns what it created, in order (objects that existed already are used as they are
/// and not listed).
///
/// # Errors
/// A create that fails other than with "already exists".
pub async fn seed(
    client: &kube::Client,
    s: &Scenario,
    secret_namespace: Option<&str>,
    cloud_url: Option<&str>,
) -> Result<Vec<Seeded>, RunError> {
    let ns = namespace(s);
    let secret_ns = secret_namespace.unwrap_or(&ns).to_owned();
    let mut created = Vec::new();
    let mut namespaces = vec![ns.clone()];
    for g in &s.groups {
        if let Some(n) = &g.namespace
            && !namespaces.contains(n)
        {
            namespaces.push(n.clone());
        }
    }
    for name in namespaces {
        let namespace_obj = Namespace {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        created.extend(
            create(
                &Api::all(client.clone()),
                &namespace_obj,
                format!("namespace {name}"),
            )
            .await?,
        );
    }
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &secret_ns);
    let configs: Api<ProviderConfig> = Api::all(client.clone());
    // The sample provider's kinds read their account from these; a profile's provider
    // serves its own kinds and brings its own ProviderConfigs as scenario objects. XRs
    // composed over a profile whose flags are the sample provider's (`loadtest`: this
    // workspace's provider) need these too, unless the scenario brings its own.
    let own_configs = s.objects.iter().any(|o| o.body["kind"] == "ProviderConfig");
    let sample = s.profile.is_none()
        || s.groups
            .iter()
            .any(|g| matches!(g.kind, GroupKind::Short(_)))
        || (s.composites.any()
            && s.profile.as_ref().and_then(|p| p.flags)
                == Some(crate::scenario::flags::Dialect::Loadtest)
            && !own_configs);
    for account in s.cloud.accounts.iter().filter(|_| sample) {
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
    for o in &s.objects {
        let (resource, ns, mut obj) = scene_object(s, o);
        if let Some(url) = cloud_url {
            with_cloud_url(&mut obj.data, url);
        }
        let api: Api<DynamicObject> = match &ns {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
            None => Api::all_with(client.clone(), &resource),
        };
        let what = format!("{} {}", resource.kind, obj.name_any());
        match api.create(&PostParams::default(), &obj).await {
            Ok(made) => created.push(Seeded {
                resource,
                namespace: ns,
                name: made.name_any(),
            }),
            Err(kube::Error::Api(e)) if e.code == 409 => {}
            Err(source) => {
                return Err(RunError::Kube {
                    what: format!("create {what}"),
                    source,
                });
            }
        }
    }
    Ok(created)
}

/// Deletes the scenario's objects, last first (a run that does not clean up otherwise:
/// the embedded target's, which ends with its API server). A failure is logged.
pub async fn delete_scene_objects(client: &kube::Client, s: &Scenario) {
    for o in s.objects.iter().rev() {
        let (resource, ns, obj) = scene_object(s, o);
        let api: Api<DynamicObject> = match &ns {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
            None => Api::all_with(client.clone(), &resource),
        };
        match api.delete(&obj.name_any(), &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(e) => {
                tracing::warn!(error = %e, name = obj.name_any(), "cannot delete a scenario object")
            }
        }
    }
}

/// Replaces `{{cloudUrl}}` in every string of `v` with `url`.
fn with_cloud_url(v: &mut serde_json::Value, url: &str) {
    use crate::scenario::profile::CLOUD_URL;
    match v {
        serde_json::Value::String(t) if t.contains(CLOUD_URL) => *t = t.replace(CLOUD_URL, url),
        serde_json::Value::Array(items) => items.iter_mut().for_each(|i| with_cloud_url(i, url)),
        serde_json::Value::Object(map) => map.values_mut().for_each(|i| with_cloud_url(i, url)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_come_from_the_providers_crd_types() {
        let bucket = kind_info(Kind::Bucket, "ns");
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
