//! The XR CRD generated from an XRD, registered with mock-apiserver, serves XRs with core's
//! fields: kept, defaulted and validated.

use composer::api::CompositeResourceDefinition;
use composer::xcrd::for_composite_resource;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use mock_apiserver::{ApiServer, Config};
use serde_json::json;

use crate::fixture::example_xrd;

fn xrd() -> CompositeResourceDefinition {
    example_xrd(
        "XBucket",
        "xbuckets",
        json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {"region": {"type": "string"}}},
            },
        }),
    )
}

/// A server serving the XR CRD generated from [`xrd`], and its XBuckets in `default`.
async fn xbuckets() -> (ApiServer, Api<DynamicObject>) {
    let server = ApiServer::new(Config::default());
    let client = kube::Client::new(server.service(), "default");
    let crd = for_composite_resource(&xrd()).unwrap();
    Api::<CustomResourceDefinition>::all(client.clone())
        .create(&PostParams::default(), &crd)
        .await
        .unwrap();
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.org", "v1", "XBucket"),
        "xbuckets",
    );
    (server, Api::namespaced_with(client, "default", &resource))
}

#[tokio::test(start_paused = true)]
async fn an_xr_keeps_core_s_fields_and_loses_undeclared_ones() {
    let (_server, xrs) = xbuckets().await;
    let xr: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.org/v1",
        "kind": "XBucket",
        "metadata": {"name": "one"},
        "spec": {
            "region": "eu-west-1",
            "undeclared": true,
            "crossplane": {
                "compositionRef": {"name": "buckets"},
                "resourceRefs": [{"apiVersion": "s3.example.org/v1", "kind": "Bucket", "name": "one-a"}],
            },
        },
    }))
    .unwrap();
    let created = xrs.create(&PostParams::default(), &xr).await.unwrap();
    let spec = &created.data["spec"];
    assert_eq!(spec["region"], "eu-west-1");
    assert!(spec.get("undeclared").is_none(), "pruned: {spec}");
    assert_eq!(spec["crossplane"]["compositionRef"]["name"], "buckets");
    assert_eq!(spec["crossplane"]["resourceRefs"][0]["name"], "one-a");
    // The XRD's default update policy, applied by the schema.
    assert_eq!(spec["crossplane"]["compositionUpdatePolicy"], "Automatic");

    let status = json!({"status": {
        "lastHandledReconcileAt": "token-1",
        "conditions": [{"type": "Ready", "status": "True", "reason": "Available",
                        "lastTransitionTime": "2026-01-01T00:00:00Z"}],
    }});
    let patched = xrs
        .patch_status("one", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    assert_eq!(patched.data["status"]["lastHandledReconcileAt"], "token-1");
    assert_eq!(patched.data["status"]["conditions"][0]["type"], "Ready");
}

#[tokio::test(start_paused = true)]
async fn an_xr_with_an_unknown_update_policy_or_a_long_name_is_refused() {
    let (_server, xrs) = xbuckets().await;

    let policy: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.org/v1", "kind": "XBucket",
        "metadata": {"name": "two"},
        "spec": {"crossplane": {"compositionUpdatePolicy": "Sometimes"}},
    }))
    .unwrap();
    let kube::Error::Api(status) = xrs
        .create(&PostParams::default(), &policy)
        .await
        .unwrap_err()
    else {
        panic!("not an API error");
    };
    assert_eq!(status.code, 422, "{status:?}");
    assert!(
        status.message.contains("compositionUpdatePolicy"),
        "{}",
        status.message
    );

    let long: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.org/v1", "kind": "XBucket",
        "metadata": {"name": "x".repeat(64)},
        "spec": {},
    }))
    .unwrap();
    let kube::Error::Api(status) = xrs.create(&PostParams::default(), &long).await.unwrap_err()
    else {
        panic!("not an API error");
    };
    assert_eq!(status.code, 422, "{status:?}");
}
