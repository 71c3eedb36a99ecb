//! The Kubernetes objects a run creates: its namespace, a Secret and a ProviderConfig per
//! cloud account, and the managed resources of every group.

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use serde_json::json;

use super::RunError;
use super::stack::cloud_token;
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
) -> Result<(), RunError> {
    let api: Api<DynamicObject> = match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, ar),
        None => Api::all_with(client.clone(), ar),
    };
    let obj: DynamicObject = serde_json::from_value(body).expect("well-formed object");
    match api.create(&PostParams::default(), &obj).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
        Err(source) => Err(RunError::Kube {
            what: format!("create {what}"),
            source,
        }),
    }
}

/// Creates the namespace, and for every cloud account a Secret with its token and a
/// cluster-scoped ProviderConfig named after the account.
///
/// # Errors
/// A create that fails other than with "already exists".
pub async fn seed(client: &kube::Client, s: &Scenario) -> Result<(), RunError> {
    let ns = namespace(s);
    let namespace_ar = ApiResource::from_gvk(&GroupVersionKind::gvk("", "v1", "Namespace"));
    create_json(
        client,
        &namespace_ar,
        None,
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        &format!("namespace {ns}"),
    )
    .await?;
    let secret_ar = ApiResource::from_gvk(&GroupVersionKind::gvk("", "v1", "Secret"));
    let pc_ar = api_resource("ProviderConfig");
    for account in &s.cloud.accounts {
        let secret = format!("mock-cloud-{}", account.name);
        create_json(
            client,
            &secret_ar,
            Some(&ns),
            json!({
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": secret, "namespace": ns},
                "data": {"token": k8s_openapi::ByteString(cloud_token(&account.name).into_bytes())},
            }),
            &format!("secret {secret}"),
        )
        .await?;
        create_json(
            client,
            &pc_ar,
            None,
            json!({
                "apiVersion": format!("{GROUP}/{VERSION}"), "kind": "ProviderConfig",
                "metadata": {"name": account.name},
                "spec": {
                    "account": account.name,
                    "credentials": {"secretRef": {"namespace": ns, "name": secret, "key": "token"}},
                },
            }),
            &format!("provider config {}", account.name),
        )
        .await?;
    }
    Ok(())
}
