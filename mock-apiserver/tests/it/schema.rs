//! CRD structural schemas: pruning with `fieldValidation`, defaulting on writes and
//! reads, and validation, through kubectl and kube-rs.

use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use mock_apiserver::{ApiServer, Config};
use serde_json::json;

use crate::kubectl::Kubectl;

const BUCKET_WITH_COLOUR: &str = "apiVersion: example.org/v1alpha1\nkind: Bucket\nmetadata:\n  name: painted\nspec:\n  region: eu\n  colour: red\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_strict_validation_refuses_unknown_fields_and_warn_only_warns() {
    let k = Kubectl::start().await.with_crd().await;
    let (ok, _, stderr) = k
        .run_with_input(&["apply", "-f", "-"], BUCKET_WITH_COLOUR)
        .await;
    assert!(!ok);
    assert!(
        stderr.contains(
            r#"Bucket in version "v1alpha1" cannot be handled as a Bucket: strict decoding error: unknown field "spec.colour""#
        ),
        "{stderr}"
    );
    let (ok, _, stderr) = k
        .run_with_input(&["apply", "--validate=warn", "-f", "-"], BUCKET_WITH_COLOUR)
        .await;
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains(r#"Warning: unknown field "spec.colour""#),
        "{stderr}"
    );
    let stored = k.buckets().get("painted").await.unwrap();
    let value = serde_json::to_value(&stored).unwrap();
    assert!(value["spec"].get("colour").is_none(), "pruned: {value}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_shows_the_field_causes_of_an_invalid_custom_resource() {
    let k = Kubectl::start().await.with_crd().await;
    let (ok, _, stderr) = k
        .run_with_input(
            &["create", "-f", "-"],
            "apiVersion: example.org/v1alpha1\nkind: Bucket\nmetadata:\n  name: b2\nspec:\n  size: many\n",
        )
        .await;
    assert!(!ok);
    assert!(
        stderr.contains(r#"The Bucket "b2" is invalid: "#),
        "{stderr}"
    );
    assert!(stderr.contains("spec.region: Required value"), "{stderr}");
    assert!(
        stderr.contains(r#"spec.size: Invalid value: "string": spec.size in body must be of type integer: "string""#),
        "{stderr}"
    );
}

const WIDGETS_CRD: &str = r#"{
  "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {"name": "widgets.example.org"},
  "spec": {"group": "example.org", "scope": "Namespaced",
    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
    "versions": [{"name": "v1", "served": true, "storage": true,
      "schema": {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object",
          "x-kubernetes-validations": [{"rule": "self.replicas <= self.maxReplicas",
                                         "message": "replicas must not exceed maxReplicas",
                                         "fieldPath": ".replicas"}],
          "properties": {
            "providerConfigRef": {"type": "object", "default": {"name": "default"},
              "properties": {"kind": {"type": "string", "default": "ProviderConfig"},
                             "name": {"type": "string"}}},
            "replicas": {"type": "integer", "default": 1, "minimum": 0},
            "maxReplicas": {"type": "integer", "default": 3},
            "mode": {"type": "string", "enum": ["fast", "safe"]}}}}}}}]}}"#;

fn widgets(client: kube::Client) -> Api<DynamicObject> {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.org", "v1", "Widget"),
        "widgets",
    );
    Api::namespaced_with(client, "default", &resource)
}

fn widget(name: &str, spec: serde_json::Value) -> DynamicObject {
    serde_json::from_value(json!({"apiVersion": "example.org/v1", "kind": "Widget",
        "metadata": {"name": name}, "spec": spec}))
    .unwrap()
}

#[tokio::test]
async fn kube_rs_sees_schema_defaults_and_gets_422_with_causes_and_rule_messages() {
    let server = ApiServer::new(Config::default());
    server
        .load_crd(serde_json::from_str(WIDGETS_CRD).unwrap())
        .unwrap();
    let api = widgets(kube::Client::new(server.service(), "default"));
    let created = api
        .create(&PostParams::default(), &widget("w1", json!({})))
        .await
        .unwrap();
    assert_eq!(
        created.data["spec"],
        json!({"providerConfigRef": {"name": "default", "kind": "ProviderConfig"},
               "replicas": 1, "maxReplicas": 3})
    );
    let err = api
        .create(
            &PostParams::default(),
            &widget("w2", json!({"replicas": 5, "mode": "slow"})),
        )
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("{err}")
    };
    assert_eq!(status.code, 422);
    assert_eq!(status.reason, "Invalid");
    assert_eq!(
        status.message,
        r#"Widget.example.org "w2" is invalid: [spec.mode: Unsupported value: "slow": supported values: "fast", "safe", spec.replicas: Invalid value: "object": replicas must not exceed maxReplicas]"#
    );
}

#[tokio::test]
async fn a_new_schema_default_shows_on_stored_objects_without_a_write() {
    let server = ApiServer::new(Config::default());
    let mut crd: serde_json::Value = serde_json::from_str(WIDGETS_CRD).unwrap();
    server.load_crd(crd.clone()).unwrap();
    let api = widgets(kube::Client::new(server.service(), "default"));
    let created = api
        .create(&PostParams::default(), &widget("w1", json!({})))
        .await
        .unwrap();
    let rv = created.metadata.resource_version.clone();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["tier"] =
        json!({"type": "string", "default": "standard"});
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(kube::Client::new(server.service(), "default"));
    let mut stored = crds.get("widgets.example.org").await.unwrap();
    let mut value = serde_json::to_value(&stored).unwrap();
    value["spec"] = crd["spec"].clone();
    stored = serde_json::from_value(value).unwrap();
    crds.replace("widgets.example.org", &PostParams::default(), &stored)
        .await
        .unwrap();
    let read = api.get("w1").await.unwrap();
    assert_eq!(read.data["spec"]["tier"], "standard");
    assert_eq!(read.metadata.resource_version, rv, "nothing was written");
}
