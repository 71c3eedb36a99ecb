//! The Kubernetes objects a run creates: its namespace, a Secret and a ProviderConfig per
//! cloud account, and the managed resources of every group.

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use serde_json::json;

use super::RunError;
use super::cloud::cloud_token;
use crate::scenario::{Kind, ResourceGroup, Scenario};

/// The provider's API group and version.
pub const GROUP: &str = "mockcloud.example.org";
/// The provider's API version.
pub const VERSION: &str = "v1alpha1";

/// The Kubernetes kind of a group's resources.
#[must_use]
pub fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Bucket => "Bucket",
        Kind::Database => "Database",
        Kind::Record => "Record",
    }
}

/// The API resource of a kind.
#[must_use]
pub fn api_resource(kind: &str) -> ApiResource {
    let plural = format!("{}s", kind.to_lowercase());
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(GROUP, VERSION, kind), &plural)
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
    let kind = kind_name(group.kind);
    let mut obj = DynamicObject::new(&group.resource_name(index, &s.name), &api_resource(kind))
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
    obj
}

async fn create_json(
    client: &kube::Client,
    ar: &ApiResource,
    namespace: Option<&str>,
    body: serde_json::Value,
    what: &str,
) -> Result<bool, RunError> {
    let api: Api<DynamicObject> = match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, ar),
        None => Api::all_with(client.clone(), ar),
    };
    let obj: DynamicObject = serde_json::from_value(body).expect("well-formed object");
    match api.create(&PostParams::default(), &obj).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(false),
        Err(source) => Err(RunError::Kube {
            what: format!("create {what}"),
            source,
        }),
    }
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
    let mut note =
        |created_now: bool, resource: &ApiResource, namespace: Option<&str>, name: &str| {
            if created_now {
                created.push(Seeded {
                    resource: resource.clone(),
                    namespace: namespace.map(str::to_owned),
                    name: name.to_owned(),
                });
            }
        };
    let namespace_ar = ApiResource::from_gvk(&GroupVersionKind::gvk("", "v1", "Namespace"));
    let made = create_json(
        client,
        &namespace_ar,
        None,
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        &format!("namespace {ns}"),
    )
    .await?;
    note(made, &namespace_ar, None, &ns);
    let secret_ar = ApiResource::from_gvk(&GroupVersionKind::gvk("", "v1", "Secret"));
    let pc_ar = api_resource("ProviderConfig");
    for account in &s.cloud.accounts {
        let secret = format!("mock-cloud-{}", account.name);
        let made = create_json(
            client,
            &secret_ar,
            Some(&secret_ns),
            json!({
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": secret, "namespace": secret_ns},
                "data": {"token": k8s_openapi::ByteString(cloud_token(&account.name).into_bytes())},
            }),
            &format!("secret {secret_ns}/{secret}"),
        )
        .await?;
        note(made, &secret_ar, Some(&secret_ns), &secret);
        let made = create_json(
            client,
            &pc_ar,
            None,
            json!({
                "apiVersion": format!("{GROUP}/{VERSION}"), "kind": "ProviderConfig",
                "metadata": {"name": account.name},
                "spec": {
                    "account": account.name,
                    "credentials": {"secretRef": {"namespace": secret_ns, "name": secret, "key": "token"}},
                },
            }),
            &format!("provider config {}", account.name),
        )
        .await?;
        note(made, &pc_ar, None, &account.name);
    }
    Ok(created)
}
